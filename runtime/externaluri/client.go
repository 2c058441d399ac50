package externaluri

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// CoreV1Config is a copy of cfg for a core/v1 REST client that speaks JSON and registers no
// API types beyond Status (decoded into Service and read as errors): the binder and the
// redirector read and write Services through it, and the runtime binary stays small.
func CoreV1Config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(scheme, gv)
	c.APIPath = "/api"
	c.GroupVersion = &gv
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return c
}
