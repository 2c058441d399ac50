package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// bindUI starts the UI as Spark's Utils.startServiceOnPort does for the SparkUI service
// (apache/spark core/src/main/scala/org/apache/spark/util/Utils.scala): port 0 is one try at a
// random port; a fixed port is tried, then on a bind collision (isBindCollision: a
// java.net.BindException, "Address already in use") each userPort(port, i) =
// (port+i-1024) % (65536-1024) + 1024 for i up to spark.port.maxRetries, logging Spark's own
// warning before each move. Any other error ends the tries at once, as it does in Spark; after
// the last collision the driver fails with "Service 'SparkUI' failed after N retries".
func bindUI(opts fakespark.Options, port, retries int) (*fakespark.Server, error) {
	for i := 0; ; i++ {
		try := port
		if port != 0 {
			try = (port+i-1024)%(65536-1024) + 1024
		}
		opts.Addr = fmt.Sprintf("0.0.0.0:%d", try)
		srv, err := fakespark.Start(opts)
		if err == nil {
			fmt.Printf("Successfully started service 'SparkUI' on port %d.\n", srv.Port)
			return srv, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || port == 0 {
			return nil, err
		}
		if i >= retries {
			return nil, fmt.Errorf("%w: Service 'SparkUI' failed after %d retries (starting from %d)", err, retries, port)
		}
		fmt.Printf("Service 'SparkUI' could not bind on port %d. Attempting port %d.\n", try, try+1)
	}
}
