//go:build !linux

package main

// toHelmStderr does nothing outside Linux: there is no /proc to reach the standard error of
// the Helm that runs the post-renderer (helmstderr_linux.go says why it is needed). The
// findings are seen by running the function on `helm template`'s output instead.
func toHelmStderr([]byte) {}
