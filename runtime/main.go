// Command sparkui-runtime is the companion that runs as a native sidecar in the Spark driver
// Pod and binds the UI Service to the port the UI really bound.
package main

import (
	"fmt"
	"os"

	"github.com/sparkui/sparkui/internal/version"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Println("sparkui-runtime", version.Version)
		return
	}
	fmt.Fprintln(os.Stderr, "sparkui-runtime", version.Version+": bind/withdraw are not built yet (issue 4)")
	os.Exit(2)
}
