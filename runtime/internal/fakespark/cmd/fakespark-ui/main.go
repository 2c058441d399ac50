// Command fakespark-ui is the stand-in Spark driver of the node tests: the image the driver
// container runs instead of Spark. It takes the arguments spark-submit gives the driver
// (`driver --properties-file <file> …`), reads spark.app.id, spark.ui.port,
// spark.port.maxRetries and spark.kubernetes.driver.pod.name/namespace from the properties as
// Spark does, and serves package fakespark's UI on 0.0.0.0: "starting up" for
// $FAKESPARK_STARTUP (default 1s), then the REST API, under spark.ui.proxyBase when set. A
// fixed port that is taken moves to port+1 … port+maxRetries as Spark's
// Utils.startServiceOnPort does (bind.go); 0 is a random port. faults.go: OOM and a normal end.
//
// It logs what the tests read from the container's log: "listening <port>" once bound,
// "SIGTERM <unix nanoseconds>" when the kubelet stops it (then it closes the port and exits 0,
// as the driver JVM's shutdown hook stops the UI), and "crash <unix nanoseconds>" when it
// exits with status 137 after $FAKESPARK_CRASH_AFTER (a crash: no preStop, no SIGTERM) — only
// once when $FAKESPARK_CRASH_MARK names a file (on a volume that outlives the container),
// which it creates before crashing: the restarted container then runs on. With
// $FAKESPARK_EXIT_AFTER the application ends by itself after that long ("finished <unix
// nanoseconds>": the UI closes, exit 0), as a batch driver does. How it is started
// (spark-submit, a Spark Connect start script, bash -c, a notebook) and what it reads then:
// args.go.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

func main() {
	cmd, args, done := startArgs(os.Args)
	if done {
		os.Exit(0)
	}
	props := properties(args)
	if cmd == "start-connect-server.sh" {
		l, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", grpcPort(props)))
		if err != nil {
			fail(err)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	opts, props, port, retries := uiOptions(props)
	ssl, err := sslOptions(props)
	if err != nil {
		fail(err)
	}
	srv, err := bindUI(opts, port, retries, ssl)
	if err != nil {
		fail(err)
	}
	fmt.Printf("listening %d app %s\n", srv.Port, opts.AppID)
	if ssl != nil {
		fmt.Printf("https %d redirect %d\n", srv.SecurePort, srv.HTTPPort)
	}
	startFaults(srv)

	startup := time.Second
	if d, err := time.ParseDuration(os.Getenv("FAKESPARK_STARTUP")); err == nil {
		startup = d
	}
	go func() {
		time.Sleep(startup)
		srv.Set(fakespark.Ready)
		fmt.Println("ready")
	}()
	mark := os.Getenv("FAKESPARK_CRASH_MARK")
	_, marked := os.Stat(mark)
	if d, err := time.ParseDuration(os.Getenv("FAKESPARK_CRASH_AFTER")); err == nil && (mark == "" || marked != nil) {
		go func() {
			if mark != "" {
				_ = os.WriteFile(mark, nil, 0o644)
			}
			time.Sleep(d)
			fmt.Printf("crash %d\n", time.Now().UnixNano())
			os.Exit(137)
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	fmt.Printf("%s %d\n", sigName(s), time.Now().UnixNano())
	// What the API server says of the UI Service at this instant, asked with the Pod's own
	// ServiceAccount token (its Role grants get on that Service): the tests' proof that the
	// withdrawal was acknowledged before the UI was told to stop, free of any clock.
	if name, ns := uiService(props); name != "" && ns != "" {
		fmt.Printf("service-at-sigterm %s\n", serviceSelector(ns, name))
	}
	srv.Close()
	os.Exit(0)
}

// uiService is the UI Service the SIGTERM handler asks for, and its namespace:
// $FAKESPARK_UI_SERVICE (a test names a carrier's <name>-sparkui-ui-svc), else the
// spark-submit prefix's (the Pod's name without -driver); the namespace from
// spark.kubernetes.namespace, else the Pod's own (its ServiceAccount volume).
func uiService(props map[string]string) (name, ns string) {
	name = os.Getenv("FAKESPARK_UI_SERVICE")
	if pod := props["spark.kubernetes.driver.pod.name"]; name == "" && pod != "" {
		name = strings.TrimSuffix(pod, "-driver") + "-ui-svc"
	}
	ns = props["spark.kubernetes.namespace"]
	if ns == "" {
		b, _ := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		ns = strings.TrimSpace(string(b))
	}
	return name, ns
}

// serviceSelector GETs the Service in-cluster and returns its spec.selector as JSON, or the
// error. The name is the spark-submit prefix's UI Service (the Pod's name without -driver).
func serviceSelector(ns, name string) string {
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	token, err := os.ReadFile(sa + "token")
	if err != nil {
		return "error: " + err.Error()
	}
	ca, err := os.ReadFile(sa + "ca.crt")
	if err != nil {
		return "error: " + err.Error()
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	host := net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/api/v1/namespaces/"+ns+"/services/"+name, nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := c.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	var svc struct {
		Spec struct {
			Selector map[string]string `json:"selector"`
		} `json:"spec"`
	}
	if resp.StatusCode != http.StatusOK {
		return "error: HTTP " + resp.Status
	}
	if err := json.NewDecoder(resp.Body).Decode(&svc); err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(svc.Spec.Selector)
	return string(b)
}

func sigName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func atoi(s string, def int) int {
	if v, err := strconv.Atoi(s); err == nil {
		return v
	}
	return def
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fakespark-ui:", err)
	os.Exit(1)
}
