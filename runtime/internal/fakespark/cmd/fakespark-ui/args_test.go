package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestShellWords(t *testing.T) {
	t.Setenv("SPARK_HOME", "/opt/spark")
	t.Setenv("EMPTY", "")
	got := shellWords(`${SPARK_HOME}/sbin/start-connect-server.sh --master k8s://https://10.0.0.1:443 --conf 'spark.ui.port=4041' --conf "a=$SPARK_HOME x" $EMPTY '' it's`)
	want := []string{"/opt/spark/sbin/start-connect-server.sh", "--master", "k8s://https://10.0.0.1:443", "--conf", "spark.ui.port=4041", "--conf", "a=/opt/spark x", "", "its"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shellWords:\n got %q\nwant %q", got, want)
	}
}

func TestStartArgs(t *testing.T) {
	t.Setenv("SPARK_HOME", "/opt/spark")
	cmd, args, done := startArgs([]string{"/bin/bash", "-c", "${SPARK_HOME}/sbin/start-connect-server.sh --conf 'spark.ui.port=4041'"})
	if done || cmd != "start-connect-server.sh" || !reflect.DeepEqual(args, []string{"--conf", "spark.ui.port=4041"}) {
		t.Errorf("bash -c: %s %q %v", cmd, args, done)
	}
	if _, _, done := startArgs([]string{"bash", "-c", "${SPARK_HOME}/sbin/stop-connect-server.sh"}); !done {
		t.Error("stop-connect-server.sh through bash must only print and exit")
	}
	if _, args, done := startArgs([]string{"/fakespark-ui", "driver", "--properties-file", "/x"}); done || len(args) != 3 {
		t.Errorf("cluster-mode driver: %q %v", args, done)
	}
}

func TestProperties(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spark-defaults.conf"), []byte("spark.ui.port  4041\nspark.master k8s://https\\://x\nspark.app.name nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SPARK_CONF_DIR", dir)
	p := properties([]string{"--master", "local[4]", "--class", "C", "--conf", "spark.ui.port=4060", "--conf=spark.port.maxRetries=3", "local:///a.jar", "--conf", "x=y"})
	want := map[string]string{"spark.ui.port": "4060", "spark.master": "local[4]", "spark.app.name": "nb", "spark.port.maxRetries": "3", "x": "y"}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("over the defaults file: %v, want %v", p, want)
	}
	if id := appID(p); !strings.HasPrefix(id, "local-") {
		t.Errorf("local master: app id %q", id)
	}
	p = properties(nil)
	if p["spark.ui.port"] != "4041" || p["spark.master"] != "k8s://https://x" {
		t.Errorf("defaults file alone: %v", p)
	}
	t.Setenv("SPARK_APPLICATION_ID", "")
	if id := appID(p); !strings.HasPrefix(id, "spark-application-") {
		t.Errorf("client mode on Kubernetes: app id %q", id)
	}
	props := filepath.Join(dir, "spark.properties")
	if err := os.WriteFile(props, []byte("spark.app.id=spark-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = properties([]string{"driver", "--properties-file", props})
	if !reflect.DeepEqual(p, map[string]string{"spark.app.id": "spark-1"}) || appID(p) != "spark-1" {
		t.Errorf("--properties-file replaces the defaults file: %v", p)
	}
	// Spark 4.0's switch: the defaults file under the properties file, --conf over both.
	if err := os.WriteFile(props, []byte("spark.app.id=spark-1\nspark.ui.port=4050\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = properties([]string{"driver", "--properties-file", props, "--load-spark-defaults", "--conf", "spark.app.name=cli"})
	want = map[string]string{"spark.app.id": "spark-1", "spark.ui.port": "4050", "spark.master": "k8s://https://x", "spark.app.name": "cli"}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("--load-spark-defaults: %v, want %v", p, want)
	}
}
