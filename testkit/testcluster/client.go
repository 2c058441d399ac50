package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// What tests do with a running cluster: identities, namespaces, server-side dry runs.

// KubeconfigFile writes a kubeconfig for cfg (for instance from UserConfig) into
// a temporary directory of t and returns its path, for binaries run as
// subprocesses ($KUBECONFIG).
func (c *Cluster) KubeconfigFile(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	data, err := kubeconfigFor(cfg)
	if err != nil {
		t.Fatalf("testcluster: kubeconfig: %v", err)
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	return p
}

// KubeconfigFor is a kubeconfig for cfg, for a component started with a file of its own.
func KubeconfigFor(cfg *rest.Config) ([]byte, error) { return kubeconfigFor(cfg) }

func kubeconfigFor(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testcluster"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: "user"}
	kc.CurrentContext = "testcluster"
	return clientcmd.Write(*kc)
}

// UserConfig returns a configuration authenticating as user with groups (client
// certificate), subject to RBAC. For a ServiceAccount pass
// "system:serviceaccount:<ns>:<name>" and its groups, or use ServiceAccountConfig.
func (c *Cluster) UserConfig(t testing.TB, user string, groups ...string) *rest.Config {
	t.Helper()
	// envtest's certificate authority is not safe for concurrent use (seen with -race).
	c.addUserMu.Lock()
	u, err := c.Env.AddUser(envtest.User{Name: user, Groups: groups}, &rest.Config{QPS: 1000, Burst: 2000})
	c.addUserMu.Unlock()
	if err != nil {
		t.Fatalf("testcluster: adding user %q: %v", user, err)
	}
	return u.Config()
}

// ServiceAccountConfig returns a configuration with the identity the API server
// gives ServiceAccount ns/name: user system:serviceaccount:<ns>:<name>, groups
// system:serviceaccounts, system:serviceaccounts:<ns>, system:authenticated.
func (c *Cluster) ServiceAccountConfig(t testing.TB, ns, name string) *rest.Config {
	t.Helper()
	return c.UserConfig(t, "system:serviceaccount:"+ns+":"+name,
		"system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated")
}

// EnsureNamespace creates namespace name unless it exists.
func (c *Cluster) EnsureNamespace(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ensureNamespace(ctx, name); err != nil {
		t.Fatalf("testcluster: namespace %q: %v", name, err)
	}
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// UniqueNamespace creates a namespace named after the test, with a random suffix,
// and returns its name. There is no namespace controller, so it is not deleted
// afterwards; it goes away with the cluster.
func (c *Cluster) UniqueNamespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = strings.Trim(base[:50], "-")
	}
	if base == "" {
		base = "test"
	}
	name := base + "-" + rand.String(6)
	c.EnsureNamespace(t, name)
	return name
}

func (c *Cluster) ensureNamespace(ctx context.Context, name string) error {
	_, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err = c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Mapping resolves the object's kind to its resource through discovery,
// refreshing discovery once when the kind is unknown (a CRD installed since).
func (c *Cluster) Mapping(obj *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("testcluster: object has no apiVersion/kind: %q/%q", obj.GetAPIVersion(), obj.GetKind())
	}
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("testcluster: resolving %s: %w", gvk, err)
	}
	return m, nil
}

// DryRunCreate submits obj as a server-side dry-run create (dryRun=All,
// fieldValidation=Strict): the API server decodes, defaults, validates and admits
// it as it would a real create, and persists nothing. A namespaced object without
// a namespace goes to "default"; its namespace is created first when missing (the
// NamespaceLifecycle admission plugin rejects objects in a namespace that does
// not exist). The error is the API server's (apierrors.IsInvalid for 422 and so on).
func (c *Cluster) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured) error {
	m, err := c.Mapping(obj)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		if err := c.ensureNamespace(ctx, ns); err != nil {
			return fmt.Errorf("testcluster: namespace %q: %w", ns, err)
		}
		ri = c.Dynamic.Resource(m.Resource).Namespace(ns)
	} else {
		ri = c.Dynamic.Resource(m.Resource)
	}
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{
		DryRun:          []string{metav1.DryRunAll},
		FieldValidation: metav1.FieldValidationStrict,
	})
	return err
}

// DryRunCreateYAML decodes one YAML (or JSON) document and passes it to DryRunCreate.
func (c *Cluster) DryRunCreateYAML(ctx context.Context, doc []byte) error {
	obj, err := DecodeYAML(doc)
	if err != nil {
		return err
	}
	return c.DryRunCreate(ctx, obj)
}

// DecodeYAML decodes one YAML (or JSON) document into an unstructured object.
// Duplicate keys are an error, as they are for the API server.
func DecodeYAML(doc []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("testcluster: decoding YAML: %w", err)
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, errors.New("testcluster: empty YAML document")
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("testcluster: decoding object: %w", err)
	}
	return obj, nil
}

// startControllerManager runs kube-controller-manager against the API server with
// admin credentials and waits for its /healthz.
