package main

import (
	"flag"
	"io"
	"net"
)

func netListenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }

func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
