package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// The ways a driver is started besides spark-submit's cluster-mode `driver --properties-file`:
// the node tests import this binary under every path the carriers' manifests run, so it
// answers to the name it was started by.
//
//   - spark-submit, start-connect-server.sh (client mode, driver-only mode): the options
//     spark-submit reads (core/src/main/java/org/apache/spark/launcher/SparkSubmitOptionParser.java:
//     `--conf k=v` and `--conf=k=v`, `--master`, `--name`, `--properties-file`), over the
//     defaults file $SPARK_CONF_DIR/spark-defaults.conf (else $SPARK_HOME/conf/…), which
//     spark-submit loads only without --properties-file (launcher/AbstractCommandBuilder.java
//     getEffectiveConfig / loadPropertiesFile; java.util.Properties format) or, from Spark 4.0
//     (SPARK-48392), with the switch --load-spark-defaults, under the file's keys
//     (deploy/SparkSubmitArguments.scala mergeDefaultSparkProperties: --conf, then the file's
//     missing keys, then Utils.getDefaultPropertiesFile's missing keys). spark-submit's own
//     Kubernetes driver Pod never reads an image's defaults file: it is started with
//     --properties-file and no switch, and its ConfigMap is mounted over $SPARK_CONF_DIR
//     (resource-managers/kubernetes/…/submit/KubernetesClientApplication.scala Client.run);
//   - bash -c '<line>': kubeflow's SparkConnect server container runs its start line through
//     bash (kubeflow/spark-operator internal/controller/sparkconnect/reconciler.go,
//     options.go buildStartConnectServerArgs); the line is split into words with '…' and "…"
//     quoting and ${VAR}/$VAR expanded from the environment, then run as above;
//   - stop-connect-server.sh: the operator's preStop hook. Spark's sbin/spark-daemon.sh stop
//     kills the pid in its pid file, which `start` writes only when it daemonizes; with
//     SPARK_NO_DAEMONIZE (the operator sets it) there is none, so it prints "no … to stop" and
//     the server runs on until the kubelet's SIGTERM.
//     A Spark Connect server also listens on spark.connect.grpc.binding.port (default 15002),
//     which the operator's probes and clients dial (connect/service/SparkConnectService.scala);
//   - a container with no command (a notebook image's own entrypoint): Spark starts when the
//     notebook creates a session, from the same defaults file.
// conformance: start-commands

// startArgs resolves how the process was started: the command's name and the arguments
// spark-submit would see, or done=true when it was a command that only prints and exits.
func startArgs(argv []string) (cmd string, args []string, done bool) {
	cmd = filepath.Base(argv[0])
	switch cmd {
	case "bash", "sh":
		if len(argv) >= 3 && argv[1] == "-c" {
			words := shellWords(argv[2])
			if len(words) == 0 {
				return cmd, nil, true
			}
			return startArgs(words)
		}
		fail(fmt.Errorf("%s: want -c <line>, got %q", argv[0], argv[1:]))
	case "stop-connect-server.sh":
		fmt.Println("no org.apache.spark.sql.connect.service.SparkConnectServer to stop")
		return cmd, nil, true
	}
	return cmd, argv[1:], false
}

// properties are the Spark properties the driver starts with, and the master.
func properties(args []string) map[string]string {
	props := map[string]string{}
	confs := map[string]string{}
	propsFile, loadDefaults := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--load-spark-defaults" { // a switch: no value follows
			loadDefaults = true
			continue
		}
		opt, val, inline := strings.Cut(a, "=")
		if !inline && i+1 < len(args) {
			val = args[i+1]
		}
		switch opt {
		case "--properties-file", "--conf", "--master", "--name", "--deploy-mode", "--class":
			if !inline {
				i++
			}
		default:
			continue
		}
		switch opt {
		case "--properties-file":
			propsFile = val
		case "--conf":
			if k, v, ok := strings.Cut(val, "="); ok {
				confs[k] = v
			}
		case "--master":
			confs["spark.master"] = val
		case "--name":
			confs["spark.app.name"] = val
		}
	}
	// Utils.getDefaultPropertiesFile: $SPARK_CONF_DIR, else $SPARK_HOME/conf.
	dir := os.Getenv("SPARK_CONF_DIR")
	if dir == "" {
		dir = filepath.Join(envOr("SPARK_HOME", "/opt/spark"), "conf")
	}
	var files []string
	if propsFile != "" {
		files = append(files, propsFile)
	}
	if propsFile == "" || loadDefaults {
		files = append(files, filepath.Join(dir, "spark-defaults.conf"))
	}
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			if i == 0 && propsFile != "" {
				fail(err)
			}
			continue // a missing defaults file is no error
		}
		got, err := sparkconf.Parse(string(data))
		if err != nil {
			fail(err)
		}
		for k, v := range got {
			if _, ok := props[k]; !ok {
				props[k] = v
			}
		}
	}
	for k, v := range confs {
		props[k] = v
	}
	return props
}

// appID is what the UI lists: spark.app.id; else the id spark-submit gave a cluster-mode driver
// ($SPARK_APPLICATION_ID); else the scheduler backend's own: local-<millis> with a local master
// (LocalSchedulerBackend), spark-application-<millis> otherwise (SchedulerBackend's default).
// conformance: app-id
func appID(props map[string]string) string {
	if id := props["spark.app.id"]; id != "" {
		return id
	}
	if id := os.Getenv("SPARK_APPLICATION_ID"); id != "" {
		return id
	}
	if strings.HasPrefix(props["spark.master"], "local") {
		return fmt.Sprintf("local-%d", time.Now().UnixMilli())
	}
	return fmt.Sprintf("spark-application-%d", time.Now().UnixMilli())
}

// grpcPort is the Spark Connect server's port.
func grpcPort(props map[string]string) int {
	return atoi(props["spark.connect.grpc.binding.port"], 15002)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// shellWords splits a line as a shell does for a simple command: blanks separate words,
// '…' quotes literally, "…" quotes with expansion, ${VAR} and $VAR expand from the environment.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'' && c != '\'':
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			in = true
			if quote == c {
				quote = 0
			} else if quote == 0 {
				quote = c
			} else {
				cur.WriteByte(c)
			}
		case c == '$' && i+1 < len(line):
			name := ""
			if line[i+1] == '{' {
				end := strings.IndexByte(line[i:], '}')
				if end < 0 {
					cur.WriteByte(c)
					continue
				}
				name, i = line[i+2:i+end], i+end
			} else {
				j := i + 1
				for j < len(line) && (line[j] == '_' || line[j] >= 'A' && line[j] <= 'Z' || line[j] >= 'a' && line[j] <= 'z' || line[j] >= '0' && line[j] <= '9') {
					j++
				}
				if j == i+1 {
					cur.WriteByte(c)
					in = true
					continue
				}
				name, i = line[i+1:j], j-1
			}
			// An unquoted expansion to nothing makes no word.
			v := os.Getenv(name)
			in = in || v != "" || quote != 0
			cur.WriteString(v)
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// withBuilderConf adds $FAKESPARK_BUILDER_CONF ("k=v,k=v"): what a program's
// SparkSession.builder.config(k, v) sets on the SparkConf after the JVM started, over the
// submitted properties, without making it a system property.
func withBuilderConf(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = v
	}
	for _, kv := range strings.Split(os.Getenv("FAKESPARK_BUILDER_CONF"), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// uiOptions are the UI's options from the properties spark-submit started the driver with
// (sysProps) and the conf the SparkContext ends up with (those plus $FAKESPARK_BUILDER_CONF),
// with spark.ui.port and spark.port.maxRetries. spark-submit makes every property it starts
// the driver with a JVM system property (core/src/main/scala/org/apache/spark/deploy/
// SparkApplication.scala, JavaMainApplication.start: sys.props(k) = v); what a session builder
// sets later is in the conf only. UIUtils.uiRoot reads spark.ui.proxyBase from the system
// properties (ui/UIUtils.scala), spark.ui.proxyRedirectUri and the rest come from the conf.
func uiOptions(sysProps map[string]string) (opts fakespark.Options, conf map[string]string, port, retries int) {
	conf = withBuilderConf(sysProps)
	opts = fakespark.Options{
		AppID: appID(conf), PodName: conf["spark.kubernetes.driver.pod.name"],
		Namespace: conf["spark.kubernetes.namespace"], State: fakespark.StartingUp,
		ProxyBase: sysProps["spark.ui.proxyBase"], ProxyRedirectURI: conf["spark.ui.proxyRedirectUri"],
	}
	return opts, conf, atoi(conf["spark.ui.port"], 4040), atoi(conf["spark.port.maxRetries"], fakespark.DefaultMaxRetries)
}
