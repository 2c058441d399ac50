package app

import (
	"os"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readObjects reads a fixture (or inline YAML) into objects.
func readObjects(t *testing.T, src string) []*yaml.RNode {
	t.Helper()
	objs, err := kio.FromBytes([]byte(src))
	if err != nil {
		t.Fatalf("parsing: %v", err)
	}
	return objs
}

func fixture(t *testing.T, name string) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile("../../testdata/assets/carriers/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return readObjects(t, string(b))
}

// configMapsOf is the ConfigMap lookup Build's index would give.
func configMapsOf(objs []*yaml.RNode) func(ns, name string) *yaml.RNode {
	return func(ns, name string) *yaml.RNode {
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
		return nil
	}
}

// detectOne detects the carriers among objs and insists on exactly one.
func detectOne(t *testing.T, objs []*yaml.RNode, opts CarrierOptions) *Carrier {
	t.Helper()
	var found []*Carrier
	for _, o := range objs {
		c, err := DetectCarrier(o, opts)
		if err != nil {
			t.Fatalf("DetectCarrier(%s %s): %v", o.GetKind(), o.GetName(), err)
		}
		if c != nil {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("found %d carriers, want 1", len(found))
	}
	return found[0]
}

// facts is what a test compares: every fact a carrier reads, plus its derived names.
type facts struct {
	Kind                               CarrierKind
	Injection                          Injection
	Name, Namespace                    string
	Conf                               map[string]string
	ConfPath, ConfFile                 string
	ServiceAccount, ServiceAccountPath string
	IPFamilyPolicy                     string
	IPFamilies                         []string
	HostNetwork                        bool
	DeployMode, MainClass              string
	SparkVersion, DriverPodName        string
	Replicas                           int
	ReplicasPath, Strategy             string
	ConcurrencyPolicy                  string
	Prefix                             string
	Identity                           map[string]string
	PathPrefix                         string
}

func factsOf(c *Carrier) facts {
	return facts{
		Kind: c.Kind, Injection: c.Injection, Name: c.Name, Namespace: c.Namespace,
		Conf: c.Conf, ConfPath: c.ConfPath, ConfFile: c.ConfFile,
		ServiceAccount: c.ServiceAccount, ServiceAccountPath: c.ServiceAccountPath,
		IPFamilyPolicy: c.IPFamilyPolicy, IPFamilies: c.IPFamilies, HostNetwork: c.HostNetwork,
		DeployMode: c.DeployMode, MainClass: c.MainClass, SparkVersion: c.SparkVersion,
		DriverPodName: c.DriverPodName, Replicas: c.Replicas, ReplicasPath: c.ReplicasPath,
		Strategy: c.Strategy, ConcurrencyPolicy: c.ConcurrencyPolicy,
		Prefix: c.Prefix(), Identity: c.IdentityLabels(), PathPrefix: c.PathPrefix(),
	}
}
