package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	netlisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// The contract's names (pinned by sparkui's design).
const (
	annoProvide   = "sparkui.dev/provide-external-uri"
	annoResolved  = "sparkui.dev/resolved-external-uri"
	withdrawnKey  = "sparkui.dev/withdrawn"
	redirectorKey = "sparkui.dev/history-redirector"
	managedBy     = "app.kubernetes.io/managed-by"
	managedByThis = "sparkui"
)

// Run reconciles until ctx ends.
func Run(ctx context.Context, cs kubernetes.Interface, namespace string, resync time.Duration) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, resync, informers.WithNamespace(namespace))
	svcs := f.Core().V1().Services()
	ings := f.Networking().V1().Ingresses()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	defer q.ShutDown()

	enqueueSvc := func(obj any) {
		if s, ok := obj.(*corev1.Service); ok {
			q.Add(types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
		}
	}
	// An Ingress change may affect any Service it names as a backend.
	enqueueIng := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		ing, ok := obj.(*networkingv1.Ingress)
		if !ok {
			return
		}
		for _, r := range ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				if p.Backend.Service != nil {
					q.Add(types.NamespacedName{Namespace: ing.Namespace, Name: p.Backend.Service.Name})
				}
			}
		}
	}
	if _, err := svcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueSvc, UpdateFunc: func(_, n any) { enqueueSvc(n) },
	}); err != nil {
		return err
	}
	if _, err := ings.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueIng, UpdateFunc: func(o, n any) { enqueueIng(o); enqueueIng(n) }, DeleteFunc: enqueueIng,
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), svcs.Informer().HasSynced, ings.Informer().HasSynced) {
		return ctx.Err()
	}
	go func() { <-ctx.Done(); q.ShutDown() }()
	for {
		key, quit := q.Get()
		if quit {
			return nil
		}
		err := reconcile(ctx, cs, svcs.Lister().Services(key.Namespace), ings.Lister().Ingresses(key.Namespace), key)
		if err != nil {
			slog.Warn("reconcile failed, retrying", "service", key.String(), "err", err)
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

func reconcile(ctx context.Context, cs kubernetes.Interface, svcs corelisters.ServiceNamespaceLister,
	ings netlisters.IngressNamespaceLister, key types.NamespacedName) error {
	svc, err := svcs.Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Annotations[annoProvide] != "true" || svc.Labels[managedBy] != managedByThis {
		return nil
	}
	want := ""
	if bound(svc) {
		all, err := ings.List(labels.Everything())
		if err != nil {
			return err
		}
		want = Resolve(svc, all)
	}
	have, has := svc.Annotations[annoResolved]
	if want == have && (want != "" || !has) {
		return nil
	}
	var value any = want
	if want == "" {
		value = nil // a JSON merge patch null removes the key
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		// Guarded by resourceVersion: never write a URI decided on a stale view (the runtime
		// may have withdrawn the Service meanwhile).
		"resourceVersion": svc.ResourceVersion,
		"annotations":     map[string]any{annoResolved: value},
	}})
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsConflict(err) {
		return nil // the newer version is queued by its own event
	}
	if err == nil {
		slog.Info("external URI", "service", key.String(), "uri", want)
	}
	return err
}

// bound: the runtime has set a selector and it is neither the withdrawal selector nor the
// History Server redirector's (a Service handed off to the History Server is withdrawn for
// this contract: the route now leads to the redirect, not the UI).
func bound(svc *corev1.Service) bool {
	if len(svc.Spec.Selector) == 0 {
		return false
	}
	_, withdrawn := svc.Spec.Selector[withdrawnKey]
	_, handedOff := svc.Spec.Selector[redirectorKey]
	return !withdrawn && !handedOff
}

// Resolve returns the URI through which the first Ingress rule routing to svc's UI port
// reaches it: https when the Ingress lists the host under tls, the path as written.
func Resolve(svc *corev1.Service, ingresses []*networkingv1.Ingress) string {
	if len(svc.Spec.Ports) == 0 {
		return ""
	}
	port := svc.Spec.Ports[0]
	for _, ing := range ingresses {
		for _, r := range ing.Spec.Rules {
			if r.Host == "" || r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				b := p.Backend.Service
				if b == nil || b.Name != svc.Name {
					continue
				}
				if b.Port.Name != "" && b.Port.Name != port.Name {
					continue
				}
				if b.Port.Name == "" && b.Port.Number != port.Port {
					continue
				}
				scheme := "http"
				for _, t := range ing.Spec.TLS {
					for _, h := range t.Hosts {
						if h == r.Host {
							scheme = "https"
						}
					}
				}
				path := p.Path
				if path == "/" {
					path = ""
				}
				return fmt.Sprintf("%s://%s%s", scheme, r.Host, path)
			}
		}
	}
	return ""
}
