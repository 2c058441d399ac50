package version

import "testing"

// TestImageContract: the tag schemes a runtime image may carry, and what each says.
func TestImageContract(t *testing.T) {
	for _, tc := range []struct {
		image string
		want  Contract
		kind  ImageTagKind
	}{
		{"ghcr.io/sparkui/sparkui-runtime:contract-1.1", Contract{1, 1}, TagContract},
		{"registry.example.com:5000/mirror/sparkui-runtime:contract-1.12@sha256:0123", Contract{1, 12}, TagContract},
		{"ghcr.io/sparkui/sparkui-runtime:0.1.0", Contract{1, 0}, TagPreContract},
		{"ghcr.io/sparkui/sparkui-runtime@sha256:0123abcd", Contract{}, TagDigestOnly},
		{"ghcr.io/sparkui/sparkui-runtime", Contract{}, TagNone},
		{"registry.example.com:5000/sparkui-runtime", Contract{}, TagNone},
		{"ghcr.io/sparkui/sparkui-runtime:0.2.0", Contract{}, TagUnknown},
		{"ghcr.io/sparkui/sparkui-runtime:latest", Contract{}, TagUnknown},
		{"ghcr.io/sparkui/sparkui-runtime:contract-1", Contract{}, TagUnknown},
		{"ghcr.io/sparkui/sparkui-runtime:contract-1.-1", Contract{}, TagUnknown},
	} {
		c, k := ImageContract(tc.image)
		if c != tc.want || k != tc.kind {
			t.Errorf("ImageContract(%q) = %v, %d; want %v, %d", tc.image, c, k, tc.want, tc.kind)
		}
	}
	if c, k := ImageContract(RuntimeImage()); k != TagContract || c != MustContract(RuntimeContract) {
		t.Errorf("the default image %s reads as %v, %d", RuntimeImage(), c, k)
	}
}

func TestContractLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{{"1.0", "1.1", true}, {"1.1", "1.0", false}, {"1.9", "1.10", true}, {"1.10", "2.0", true}, {"1.1", "1.1", false}} {
		if got := MustContract(tc.a).Less(MustContract(tc.b)); got != tc.less {
			t.Errorf("%s < %s = %v", tc.a, tc.b, got)
		}
	}
}
