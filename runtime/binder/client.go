package binder

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/runtime/externaluri"
)

// Client writes one Service.
type Client struct {
	rc rest.Interface
	t  Target

	mu   sync.Mutex
	view *externaluri.Service // the Service as the last response had it; nil = unknown
}

// NewClient makes a client for core/v1 Services from cfg. It registers no API types: the
// runtime sends JSON Patches and reads Status errors, nothing else (which keeps it small).
func NewClient(cfg *rest.Config, t Target) (*Client, error) {
	c := externaluri.CoreV1Config(cfg)
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Client{rc: rc, t: t}, nil
}

// patch sends body and remembers the Service the API server answered with. A failure other
// than a refused patch (which changed nothing) leaves the Service's state unknown.
//
// One request per call: client-go would otherwise retry a 429 or 5xx that carries
// Retry-After inside Do, after exactly the header's seconds and up to 10 times, with no
// jitter (k8s.io/client-go v0.37.2 rest/with_retry.go, withRetry.IsNextRetry and Before;
// rest/request.go NewRequest, maxRetries 10). The API server's priority and fairness answers
// a burst with 429 and "Retry-After: 1", so every runtime refused in the same second came back
// in the same second (testkit/scale, 500 applications in a burst: 0.73 refused patches per
// application, up to 4). The agent's own backoff retries instead, jittered, with the
// server's delay as its floor (agent.retryDelay).
func (c *Client) patch(ctx context.Context, body []byte) error {
	res := c.rc.Patch(types.JSONPatchType).
		Namespace(c.t.Namespace).Resource("services").Name(c.t.Service).
		Param("fieldManager", FieldManager).
		MaxRetries(0).
		Body(body).Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		err = res.Error() // the API server's Status, when the body is one
	}
	c.remember(raw, err)
	return err
}

func (c *Client) remember(raw []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if !isGuardFailure(err) {
			c.view = nil
		}
		return
	}
	if v, perr := externaluri.Parse(raw); perr == nil {
		c.view = v
	} else {
		c.view = nil
	}
}

// View is the Service as the last response had it, nil when unknown (nothing written yet in
// this process, or the last request failed and may or may not have been applied).
func (c *Client) View() *externaluri.Service {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view
}

// Get reads the Service (used only to poll a load balancer's ingress, and by wait-uri).
func (c *Client) Get(ctx context.Context) (*externaluri.Service, error) {
	res := c.rc.Get().Namespace(c.t.Namespace).Resource("services").Name(c.t.Service).Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		return nil, res.Error()
	}
	v, err := externaluri.Parse(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.view = v
	c.mu.Unlock()
	return v, nil
}

// Bind sends BindPatch.
func (c *Client) Bind(ctx context.Context, port int) error {
	return c.classify(ctx, "bind", c.patch(ctx, c.t.BindPatch(port)))
}

// BindWith sends BindPatchWith: the bind and the status annotations st in one request. The
// form is the one the last response calls for (unknown counts as having annotations:
// sparkui-fn writes kustomize.toolkit.fluxcd.io/ssa on every UI Service it builds); when it is
// refused, the other form follows at once (a Service written by hand without annotations,
// or whose annotations went meanwhile); refused again, a guard failed.
func (c *Client) BindWith(ctx context.Context, port int, st State) error {
	v := c.View()
	have := v == nil || len(v.Metadata.Annotations) > 0
	err := c.patch(ctx, c.t.BindPatchWith(port, st, have))
	if isGuardFailure(err) && st.State != "" {
		err = c.patch(ctx, c.t.BindPatchWith(port, st, !have))
	}
	return c.classify(ctx, "bind", err)
}

// Publish writes the resolved external URI (PublishPatch). When the patch is refused with the
// form the last response called for, the other form is tried (metadata.annotations appeared or
// went meanwhile); refused again, the Service is no longer bound to this driver (or no longer
// this application's): a NotOurs failure, without the read that names the owner.
func (c *Client) Publish(ctx context.Context, uri string) error {
	v := c.View()
	have := v != nil && len(v.Metadata.Annotations) > 0
	err := c.patch(ctx, c.t.PublishPatch(uri, have))
	if isGuardFailure(err) {
		err = c.patch(ctx, c.t.PublishPatch(uri, !have))
	}
	if isGuardFailure(err) {
		return &Failure{Kind: NotOurs, Err: err, Message: fmt.Sprintf(
			"publish the external URI on Service %s/%s: refused, the Service is no longer bound to this driver "+
				"(its selector changed) or is not this application's; the URI is not written", c.t.Namespace, c.t.Service)}
	}
	return c.classify(ctx, "publish the external URI on", err)
}
