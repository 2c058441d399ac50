package testcluster_test

import (
	"bytes"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestDryRunResolvedOutputs submits the function's output (testdata/<case>/expected.yaml,
// which TestGolden holds equal to what the function writes) to a strict server-side dry run,
// object by object: for carriers named over 63 characters the identity labels on the driver's
// pod template and on the UI Service, Role and RoleBinding are label values the API server
// accepts; the objects rewritten from YAML aliases and merge keys, and the first copies of
// duplicated carriers, are valid objects.
func TestDryRunResolvedOutputs(t *testing.T) {
	c := testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds"}})
	for _, tc := range []struct {
		dir     string
		objects int
	}{
		{"long-carrier-names", 8}, // 2 carriers and their Service, Role and RoleBinding
		{"aliases", 17},           // 4 SparkApplications and a ConfigMap, 4 × 3 added
		{"duplicate-carriers", 15},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			items, err := (&kio.ByteReader{Reader: bytes.NewReader(mustRead(t, "../../testdata/"+tc.dir+"/expected.yaml")), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tc.objects {
				t.Fatalf("%d objects, want %d", len(items), tc.objects)
			}
			for _, it := range items {
				if err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(it.MustString())); err != nil {
					t.Errorf("%s %s rejected: %v", it.GetKind(), it.GetName(), err)
				}
			}
		})
	}
}
