package testcluster

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// GatewayAPICRDs are the standard-channel CRD files of the route kinds sparkui writes
// (HTTPRoute, GRPCRoute), read from the module cache at the sigs.k8s.io/gateway-api
// version go.mod requires (`go list -m` names its directory): nothing is copied into the
// repository, and a version bump in go.mod is what the dry runs check against.
func GatewayAPICRDs() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return nil, fmt.Errorf("testcluster: go list -m sigs.k8s.io/gateway-api: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return nil, fmt.Errorf("testcluster: sigs.k8s.io/gateway-api is not in the module cache (go mod download)")
	}
	std := filepath.Join(dir, "config", "crd", "standard")
	return []string{
		filepath.Join(std, "gateway.networking.k8s.io_httproutes.yaml"),
		filepath.Join(std, "gateway.networking.k8s.io_grpcroutes.yaml"),
	}, nil
}
