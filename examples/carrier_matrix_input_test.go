package examples_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// matrixInput is the carrier fixture with the feature's Spark properties and host network
// setting written where the carrier keeps them.
func matrixInput(t *testing.T, mc matrixCarrier, route string, f matrixFeature) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(mc.file))
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(f.conf))
	for k := range f.conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		setConf(t, items, k, f.conf[k])
	}
	if f.hostNetwork != nil {
		setHostNetwork(t, items, route, *f.hostNetwork)
		if *f.hostNetwork && mc.kind == "workload" {
			provePodName(t, items)
		}
	}
	return items
}

// provePodName applies SUI022's fix to a client-mode workload put on the host network: there
// Spark's application id is no proof, so the conf names the driver Pod
// (spark.kubernetes.driver.pod.name), which the runtime matches against POD_NAME. A
// StatefulSet's Pod name is fixed (<name>-0); other workloads pass $(POD_NAME), which the
// kubelet expands from the container's downward-API env.
func provePodName(t *testing.T, items []*yaml.RNode) {
	t.Helper()
	const key = "spark.kubernetes.driver.pod.name"
	for _, it := range items {
		switch it.GetKind() {
		case "StatefulSet":
			setConf(t, items, key, it.GetName()+"-0")
		case "Deployment", "Job", "CronJob":
			setConf(t, items, key, "$(POD_NAME)")
			ctr := workloadContainer(t, it)
			env, err := ctr.Pipe(yaml.LookupCreate(yaml.SequenceNode, "env"))
			if err != nil {
				t.Fatal(err)
			}
			if e, _ := env.Pipe(yaml.MatchElement("name", "POD_NAME")); e == nil {
				mustPipe(t, env, yaml.Append(yaml.MustParse("name: POD_NAME\nvalueFrom: {fieldRef: {fieldPath: metadata.name}}\n").YNode()))
			}
		}
	}
}

// setConf sets Spark property k=v where the carrier's driver reads it: a spark-submit Pod's
// spark.properties (and, for the IP families, the driver Service Spark makes from them), an
// operator resource's sparkConf, a StatefulSet's mounted spark-defaults.conf, a workload's
// spark-submit command line (--conf, replacing any earlier setting of k).
func setConf(t *testing.T, items []*yaml.RNode, k, v string) {
	t.Helper()
	for _, it := range items {
		switch kind := it.GetKind(); {
		case kind == "ConfigMap" && it.GetDataMap()["spark.properties"] != "":
			it.SetDataMap(merged(it.GetDataMap(), map[string]string{"spark.properties": propertiesWith(it.GetDataMap()["spark.properties"], k+"=", k+"="+v)}))
		case kind == "ConfigMap" && it.GetDataMap()["spark-defaults.conf"] != "":
			it.SetDataMap(merged(it.GetDataMap(), map[string]string{"spark-defaults.conf": propertiesWith(it.GetDataMap()["spark-defaults.conf"], k+" ", k+" "+v)}))
		case kind == "Service" && strings.HasSuffix(it.GetName(), "-driver-svc"):
			switch k {
			case "spark.kubernetes.driver.service.ipFamilyPolicy":
				mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("ipFamilyPolicy", yaml.NewScalarRNode(v)))
			case "spark.kubernetes.driver.service.ipFamilies":
				mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("ipFamilies", yaml.NewListRNode(strings.Split(v, ",")...)))
			}
		case strings.HasPrefix(it.GetApiVersion(), "sparkoperator.k8s.io/") || strings.HasPrefix(it.GetApiVersion(), "spark.apache.org/") ||
			strings.HasPrefix(it.GetApiVersion(), "spark.stackable.tech/"):
			path := []string{"spec", "sparkConf"}
			if kind == "ScheduledSparkApplication" {
				path = []string{"spec", "template", "sparkConf"}
			}
			mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, path...), yaml.SetField(k, yaml.NewStringRNode(v)))
		case kind == "Deployment" || kind == "Job" || kind == "CronJob":
			ctr := workloadContainer(t, it)
			for _, list := range []string{"command", "args"} {
				l := ctr.Field(list)
				if l == nil {
					continue
				}
				var kept []string
				var toks []string
				for _, e := range l.Value.YNode().Content {
					toks = append(toks, e.Value)
				}
				for i := 0; i < len(toks); i++ {
					switch {
					case strings.HasPrefix(toks[i], "--conf="+k+"="):
					case (toks[i] == "--conf" || toks[i] == "-c") && i+1 < len(toks) && strings.HasPrefix(toks[i+1], k+"="):
						i++
					default:
						kept = append(kept, toks[i])
					}
				}
				if list == "command" {
					// spark-submit (or the script that calls it) first, its options after.
					kept = append(kept[:1:1], append([]string{"--conf=" + k + "=" + v}, kept[1:]...)...)
				}
				mustPipe(t, ctr, yaml.SetField(list, yaml.NewListRNode(kept...)))
			}
		}
	}
}

// propertiesWith is a properties text with the lines starting with prefix replaced by line.
func propertiesWith(text, prefix, line string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(append(out, line), "\n") + "\n"
}

// setHostNetwork puts the driver on the host network, or takes it off: the pod spec's
// hostNetwork (and Kubernetes' DNS policy for it), and on the kubeflow webhook injection
// spec.driver.hostNetwork, which the webhook applies (sparkpod_defaulter.go addHostNetwork).
func setHostNetwork(t *testing.T, items []*yaml.RNode, route string, on bool) {
	t.Helper()
	for _, it := range items {
		var spec []string
		switch it.GetKind() {
		case "Pod":
			spec = []string{"spec"}
		case "Deployment", "StatefulSet", "Job":
			spec = []string{"spec", "template", "spec"}
		case "CronJob":
			spec = []string{"spec", "jobTemplate", "spec", "template", "spec"}
		case "SparkConnect":
			spec = []string{"spec", "server", "template", "spec"}
		case "SparkApplication", "ScheduledSparkApplication":
			base := []string{"spec"}
			if it.GetKind() == "ScheduledSparkApplication" {
				base = []string{"spec", "template"}
			}
			if strings.HasPrefix(it.GetApiVersion(), "spark.apache.org/") {
				spec = append(base, "driverSpec", "podTemplateSpec", "spec")
			} else if strings.HasPrefix(it.GetApiVersion(), "spark.stackable.tech/") {
				spec = append(base, "driver", "podOverrides", "spec")
			} else if route == "webhook" {
				drv := append(base, "driver")
				if on {
					mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, drv...), yaml.SetField("hostNetwork", trueNode()))
				} else {
					mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, drv...), yaml.Clear("hostNetwork"))
				}
				continue
			} else {
				spec = append(base, "driver", "template", "spec")
			}
		default:
			continue
		}
		s, err := it.Pipe(yaml.LookupCreate(yaml.MappingNode, spec...))
		if err != nil {
			t.Fatal(err)
		}
		if on {
			mustPipe(t, s, yaml.SetField("hostNetwork", trueNode()))
			mustPipe(t, s, yaml.SetField("dnsPolicy", yaml.NewScalarRNode("ClusterFirstWithHostNet")))
		} else {
			mustPipe(t, s, yaml.Clear("hostNetwork"))
			mustPipe(t, s, yaml.Clear("dnsPolicy"))
		}
	}
}

func workloadContainer(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	path := []string{"spec", "template", "spec", "containers"}
	if it.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"}
	}
	cs, err := it.Pipe(yaml.Lookup(path...))
	if err != nil || cs == nil {
		t.Fatalf("%s %s: no containers: %v", it.GetKind(), it.GetName(), err)
	}
	elems, _ := cs.Elements()
	return elems[0]
}

func mustPipe(t *testing.T, n *yaml.RNode, fs ...yaml.Filter) {
	t.Helper()
	if _, err := n.Pipe(fs...); err != nil {
		t.Fatal(err)
	}
}
