package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// How a workload's Spark conf is assembled from what spark-submit reads (docs/spark-conformance.md).

func TestSubmitArgs(t *testing.T) {
	tests := []struct {
		name      string
		tokens    []string
		conf      map[string]string
		mainClass string
		propsFile string
	}{
		{"forms", []string{"spark-submit", "--conf", "a=1", "--conf=b=2", "-c", "c=x=y", "--name", "n", "--deploy-mode=client"},
			map[string]string{"a": "1", "b": "2", "c": "x=y"}, "", ""},
		{"later wins", []string{"--conf", "a=1", "--conf", "a=2"}, map[string]string{"a": "2"}, "", ""},
		{"dangling flag", []string{"--verbose", "--conf"}, map[string]string{}, "", ""},
		{"conf without value", []string{"--conf", "novalue", "--class", "Main"}, map[string]string{}, "Main", ""},
		{"properties file", []string{"--properties-file", "/etc/spark/app.conf"}, map[string]string{}, "", "/etc/spark/app.conf"},
		{"history server", []string{"/opt/spark/sbin/start-history-server.sh"}, map[string]string{}, HistoryServerClass, ""},
		{"history server class", []string{"spark-class", HistoryServerClass}, map[string]string{}, HistoryServerClass, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctr := yamlx.NewMap("name", "c", "args", tc.tokens)
			c := &Carrier{Object: yaml.NewRNode(yamlx.NewMap()), Kind: KindWorkload}
			got, err := c.readSubmitArgs(ctr, "spec.template.spec.containers[0]")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.conf, got.conf); diff != "" {
				t.Errorf("conf (-want +got):\n%s", diff)
			}
			if got.mainClass != tc.mainClass || got.propertiesFile != tc.propsFile {
				t.Errorf("mainClass %q, propertiesFile %q; want %q, %q", got.mainClass, got.propertiesFile, tc.mainClass, tc.propsFile)
			}
		})
	}
}

// TestWorkloadConfFile covers the ways a properties file reaches the driver container.
func TestWorkloadConfFile(t *testing.T) {
	cm := `apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: ns}
data:
  spark-defaults.conf: "spark.ui.port 4100"
  app.conf: "spark.ui.port=4200"
  broken: "spark.ui.port=\\u12"
`
	job := func(ctr, vols string) string {
		return cm + "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  template:\n" +
			"    metadata: {labels: {spark-role: driver}}\n    spec:\n      containers:\n      - " + ctr + "\n      volumes:\n      - " + vols + "\n"
	}
	tests := []struct {
		name, doc, port, file, confErr string
	}{
		{"default dir", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf/}]}", "{name: v, configMap: {name: conf}}"),
			"4100", "conf/spark-defaults.conf", ""},
		{"subPath", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf/spark-defaults.conf, subPath: app.conf}]}", "{name: v, configMap: {name: conf}}"),
			"4200", "conf/app.conf", ""},
		{"items rename", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf}]}", "{name: v, configMap: {name: conf, items: [{key: app.conf, path: spark-defaults.conf}]}}"),
			"4200", "conf/app.conf", ""},
		{"properties-file", job("{name: d, args: [--properties-file, /etc/app/app.conf], volumeMounts: [{name: v, mountPath: /etc/app}]}", "{name: v, configMap: {name: conf}}"),
			"4200", "conf/app.conf", ""},
		{"other dir", job("{name: d, volumeMounts: [{name: v, mountPath: /etc/app}]}", "{name: v, configMap: {name: conf}}"),
			"fn", "", ""},
		{"not a ConfigMap", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf}]}", "{name: v, emptyDir: {}}"),
			"fn", "", ""},
		{"ConfigMap not in the input", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf}]}", "{name: v, configMap: {name: elsewhere}}"),
			"fn", "", ""},
		{"unreadable", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf/spark-defaults.conf, subPath: broken}]}", "{name: v, configMap: {name: conf}}"),
			"fn", "conf/broken", "ConfigMap conf/broken: line 1: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, tc.doc)
			c := detectOne(t, objs, CarrierOptions{SparkConf: map[string]string{"spark.ui.port": "fn"}, ConfigMap: configMapsOf(objs)})
			if c.Conf["spark.ui.port"] != tc.port || c.ConfFile != tc.file {
				t.Errorf("spark.ui.port = %q from %q, want %q from %q", c.Conf["spark.ui.port"], c.ConfFile, tc.port, tc.file)
			}
			switch {
			case tc.confErr == "" && c.ConfError != nil:
				t.Errorf("ConfError = %q", c.ConfError.Msg)
			case tc.confErr != "" && (c.ConfError == nil || !strings.HasPrefix(c.ConfError.Msg, tc.confErr)):
				t.Errorf("ConfError = %v, want prefix %q", c.ConfError, tc.confErr)
			}
		})
	}
}

// TestWorkloadConfPrecedence: spark-submit's SparkSubmitArguments takes --deploy-mode over
// --conf whatever their order, then the DEPLOY_MODE environment variable; --properties-file
// replaces spark-defaults.conf unless --load-spark-defaults (4.0+) loads it under the file.
func TestWorkloadConfPrecedence(t *testing.T) {
	cm := `apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: ns}
data:
  spark-defaults.conf: "spark.ui.port 4100\nspark.ssl.enabled true\n"
  app.conf: "spark.ui.port=4200"
`
	job := func(args, env string) string {
		return cm + "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  template:\n" +
			"    metadata: {labels: {spark-role: driver}}\n    spec:\n      containers:\n" +
			"      - {name: d, args: " + args + ", env: " + env + ", volumeMounts: [{name: v, mountPath: /opt/spark/conf}, {name: v, mountPath: /etc/app}]}\n" +
			"      volumes:\n      - {name: v, configMap: {name: conf}}\n"
	}
	for _, tc := range []struct {
		name, args, env string
		want            map[string]string // "" = unset
	}{
		{"option before --conf", "[--deploy-mode, client, --conf, spark.submit.deployMode=cluster]", "[]",
			map[string]string{"spark.submit.deployMode": "client"}},
		{"option after --conf", "[--conf, spark.submit.deployMode=cluster, --deploy-mode=client]", "[]",
			map[string]string{"spark.submit.deployMode": "client"}},
		{"--master over --conf", "[--master, 'local[2]', --conf, spark.master=k8s://x]", "[]",
			map[string]string{"spark.master": "local[2]"}},
		{"DEPLOY_MODE when nothing else says", "[]", "[{name: DEPLOY_MODE, value: cluster}]",
			map[string]string{"spark.submit.deployMode": "cluster"}},
		{"DEPLOY_MODE under --conf", "[--conf, spark.submit.deployMode=client]", "[{name: DEPLOY_MODE, value: cluster}]",
			map[string]string{"spark.submit.deployMode": "client"}},
		{"spark-defaults.conf alone", "[]", "[]",
			map[string]string{"spark.ui.port": "4100", "spark.ssl.enabled": "true"}},
		{"--properties-file replaces spark-defaults.conf", "[--properties-file, /etc/app/app.conf]", "[]",
			map[string]string{"spark.ui.port": "4200", "spark.ssl.enabled": ""}},
		{"--load-spark-defaults loads it under the file", "[--properties-file, /etc/app/app.conf, --load-spark-defaults]", "[]",
			map[string]string{"spark.ui.port": "4200", "spark.ssl.enabled": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, job(tc.args, tc.env))
			c := detectOne(t, objs, CarrierOptions{ConfigMap: configMapsOf(objs)})
			if c.ConfError != nil {
				t.Fatalf("ConfError %s", c.ConfError.Msg)
			}
			for k, want := range tc.want {
				if got := c.Conf[k]; got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}
