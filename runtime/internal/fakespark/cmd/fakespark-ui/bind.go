package main

import (
	"crypto/x509"
	"fmt"
	"os"
	"strconv"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// bindUI starts the UI on every interface as WebUI.bind does (core/src/main/scala/org/apache/
// spark/ui/WebUI.scala: host $SPARK_LOCAL_IP, else 0.0.0.0, which Go binds as one dual-stack
// "::" socket) through fakespark.StartUI, which follows JettyUtils.startJettyServer and
// Utils.startServiceOnPort: the HTTPS connector first when SSL is on, then spark.ui.port's,
// each moving on a bind collision up to spark.port.maxRetries, a random port (0) included;
// Spark's log lines printed as it goes.
func bindUI(opts fakespark.Options, port, retries int, ssl *fakespark.SSL) (*fakespark.UI, error) {
	fakespark.Logf = func(f string, a ...any) { fmt.Printf(f, a...) }
	host := os.Getenv("SPARK_LOCAL_IP")
	if host == "" {
		host = "0.0.0.0"
	}
	return fakespark.StartUI(opts, host, port, retries, ssl)
}

// sslOptions is SSLOptions.parse for the "spark.ssl.ui" namespace with "spark.ssl" as its
// defaults (core/src/main/scala/org/apache/spark/SSLOptions.scala, 3.5 and 4.0): enabled and
// needClientAuth fall back to spark.ssl.*, the port does not ("$ns.port" alone). The keystore
// is a certificate generated at start (no key is committed); with needClientAuth the
// truststore is $FAKESPARK_CLIENT_CA (a PEM file), else nothing, which refuses every client.
// conformance: ssl-options
func sslOptions(props map[string]string) (*fakespark.SSL, error) {
	flag := func(k string) (bool, bool) {
		v, err := strconv.ParseBool(props[k])
		return v, err == nil
	}
	enabled, set := flag("spark.ssl.ui.enabled")
	if !set {
		enabled, _ = flag("spark.ssl.enabled")
	}
	if !enabled {
		return nil, nil
	}
	ssl := &fakespark.SSL{}
	if p := props["spark.ssl.ui.port"]; p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("spark.ssl.ui.port %q: Port number must be a non-negative value", p)
		}
		ssl.Port = n
	}
	need, set := flag("spark.ssl.ui.needClientAuth")
	if !set {
		need, _ = flag("spark.ssl.needClientAuth")
	}
	ssl.NeedClientAuth = need
	if need {
		ssl.ClientCAs = x509.NewCertPool()
		if f := os.Getenv("FAKESPARK_CLIENT_CA"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			ssl.ClientCAs.AppendCertsFromPEM(b)
		}
	}
	host, _ := os.Hostname()
	cert, err := fakespark.NewCert("spark-driver", "127.0.0.1", "::1", "localhost", host)
	if err != nil {
		return nil, err
	}
	ssl.Cert = cert
	return ssl, nil
}
