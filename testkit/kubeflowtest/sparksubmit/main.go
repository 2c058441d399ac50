// Command sparksubmit is a stand-in for Spark's bin/spark-submit in cluster mode on
// Kubernetes, for the kubeflow spark-operator controller the tests run
// (testkit/kubeflowtest): the operator execs $SPARK_HOME/bin/spark-submit with the arguments
// its internal/controller/sparkapplication/submission.go buildSparkSubmitArgs builds, and this
// creates what Spark's Kubernetes client would from them — the driver Pod, its conf ConfigMap
// and the headless driver Service (testkit/operatortest SparkDriver and DriverService model
// Spark's KubernetesDriverBuilder, BasicDriverFeatureStep, DriverServiceFeatureStep and the
// pod template step) — then exits, as spark.kubernetes.submission.waitAppCompletion=false
// makes Spark's KubernetesClientApplication do. No JVM, no Spark distribution.
//
// The API server is --master (k8s://https://host:port, which the operator takes from
// KUBERNETES_SERVICE_HOST/PORT, pkg/util GetMasterURL); the credentials are $KUBECONFIG's,
// which the operator's environment passes down (Spark would use the operator's in-cluster
// ServiceAccount token, which a process on the test machine does not have).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/testkit/operatortest"
)

// SparkVersion is the Spark this stand-in is taken for: the spark-version label
// BasicDriverFeatureStep gives the driver is the submitting client's version.
const SparkVersion = "3.5.5"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "spark-submit (sparkui stand-in):", err)
		os.Exit(1)
	}
}

// args is what SparkSubmitArguments parses: options, then the primary resource, then the
// application's arguments.
type args struct {
	master, deployMode, mainClass, name string
	conf                                map[string]string
	resource                            string
	appArgs                             []string
}

// valued are spark-submit's options that take a value (SparkSubmitOptionParser.opts);
// switches the ones that do not (its switches, and --load-spark-defaults of Spark 4.0, which
// the operator's LoadSparkDefaults feature gate adds).
var valued = map[string]bool{
	"--master": true, "--deploy-mode": true, "--class": true, "--name": true, "--jars": true,
	"--packages": true, "--exclude-packages": true, "--repositories": true, "--files": true,
	"--py-files": true, "--archives": true, "--conf": true, "-c": true, "--properties-file": true,
	"--driver-memory": true, "--driver-cores": true, "--proxy-user": true, "--num-executors": true,
	"--executor-memory": true, "--executor-cores": true,
}
var switches = map[string]bool{"--verbose": true, "-v": true, "--supervise": true, "--load-spark-defaults": true}

func parse(argv []string) (args, error) {
	a := args{conf: map[string]string{}}
	for i := 0; i < len(argv); i++ {
		o := argv[i]
		switch {
		case switches[o]:
		case valued[o]:
			if i+1 >= len(argv) {
				return a, fmt.Errorf("option %s needs a value", o)
			}
			v := argv[i+1]
			i++
			switch o {
			case "--master":
				a.master = v
			case "--deploy-mode":
				a.deployMode = v
			case "--class":
				a.mainClass = v
			case "--name":
				a.name = v
			case "--conf", "-c":
				k, val, ok := strings.Cut(v, "=")
				if !ok {
					return a, fmt.Errorf("--conf %q: not key=value", v)
				}
				a.conf[k] = val
			case "--driver-memory":
				a.conf["spark.driver.memory"] = v
			case "--driver-cores":
				a.conf["spark.driver.cores"] = v
			}
		case strings.HasPrefix(o, "-"):
			return a, fmt.Errorf("unknown option %s", o)
		default:
			a.resource, a.appArgs = o, argv[i+1:]
			return a, nil
		}
	}
	return a, nil
}

func run(argv []string) error {
	a, err := parse(argv)
	if err != nil {
		return err
	}
	if a.deployMode != "cluster" {
		return fmt.Errorf("--deploy-mode %q: only cluster mode is modelled", a.deployMode)
	}
	host, ok := strings.CutPrefix(a.master, "k8s://")
	if !ok {
		return fmt.Errorf("--master %q: not k8s://", a.master)
	}
	s, err := submission(a)
	if err != nil {
		return err
	}
	pod, cm, err := operatortest.SparkDriver(s)
	if err != nil {
		return err
	}
	svc, err := operatortest.DriverService(s)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags(host, os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// KubernetesClientApplication.run creates the Pod first, then the other resources owned by
	// it (KubernetesUtils.addOwnerReference), deleting the Pod when they fail.
	created, err := c.CoreV1().Pods(s.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			// The fabric8 client's KubernetesClientException carries "code=409", which the
			// operator looks for (common.ErrorCodePodAlreadyExists).
			return fmt.Errorf("driver Pod %s/%s: failure executing POST pods: %v (code=409)", s.Namespace, s.PodName, err)
		}
		return fmt.Errorf("driver Pod %s/%s: %v", s.Namespace, s.PodName, err)
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: created.Name, UID: created.UID, Controller: ptrTrue()}
	svc.OwnerReferences = append(svc.OwnerReferences, owner)
	cm.OwnerReferences = append(cm.OwnerReferences, owner)
	if _, err = c.CoreV1().Services(s.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err == nil {
		_, err = c.CoreV1().ConfigMaps(s.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	}
	if err != nil {
		_ = c.CoreV1().Pods(s.Namespace).Delete(ctx, created.Name, metav1.DeleteOptions{})
		return fmt.Errorf("driver resources of %s/%s: %v", s.Namespace, s.PodName, err)
	}
	fmt.Printf("Application %s (%s) submitted: Pod %s, Service %s, ConfigMap %s\n", s.AppName, s.AppID, created.Name, svc.Name, cm.Name)
	return nil
}

func ptrTrue() *bool { t := true; return &t }

// submission turns the parsed arguments into the driver Spark would build: the template
// file the operator wrote (spark.kubernetes.driver.podTemplateFile, a PodTemplateSpec in
// YAML: pkg/util WriteObjectToFile), the app id spark-<32 hex> (KubernetesConf
// getKubernetesAppId), the Pod name spark.kubernetes.driver.pod.name, the image
// spark.kubernetes.driver.container.image else spark.kubernetes.container.image, the driver
// ServiceAccount, cores, core limit and memory from their Spark properties.
func submission(a args) (operatortest.Submission, error) {
	c := a.conf
	s := operatortest.Submission{
		Namespace: c["spark.kubernetes.namespace"], PodName: c["spark.kubernetes.driver.pod.name"],
		AppID:   "spark-" + strings.ReplaceAll(string(uuid.NewUUID()), "-", ""),
		AppName: a.name, SparkVersion: SparkVersion, Conf: c,
		ContainerName:  c["spark.kubernetes.driver.podTemplateContainerName"],
		ServiceAccount: c["spark.kubernetes.authenticate.driver.serviceAccountName"],
		CoreLimit:      c["spark.kubernetes.driver.limit.cores"],
		Cores:          1, MemoryMiB: 1024,
		MainClass: a.mainClass, MainResource: a.resource, Args: a.appArgs,
	}
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	if s.AppName == "" {
		return s, fmt.Errorf("no --name")
	}
	if s.PodName == "" {
		// KubernetesClientApplication: <resourceNamePrefix>-driver.
		s.PodName = strings.ToLower(s.AppName) + "-" + operatortest.RandomHex(8) + "-driver"
	}
	if s.Image = c["spark.kubernetes.driver.container.image"]; s.Image == "" {
		s.Image = c["spark.kubernetes.container.image"]
	}
	if s.Image == "" {
		return s, fmt.Errorf("no spark.kubernetes.container.image")
	}
	if v := c["spark.driver.cores"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return s, fmt.Errorf("spark.driver.cores %q: %v", v, err)
		}
		s.Cores = n
	}
	if v := c["spark.driver.memory"]; v != "" {
		m, err := mebibytes(v)
		if err != nil {
			return s, fmt.Errorf("spark.driver.memory %q: %v", v, err)
		}
		s.MemoryMiB = m
	}
	if f := c["spark.kubernetes.driver.podTemplateFile"]; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return s, fmt.Errorf("spark.kubernetes.driver.podTemplateFile: %v", err)
		}
		s.Template = &corev1.PodTemplateSpec{}
		if err := yaml.UnmarshalStrict(b, s.Template); err != nil {
			return s, fmt.Errorf("spark.kubernetes.driver.podTemplateFile %s: %v", f, err)
		}
	}
	return s, nil
}

// mebibytes reads spark.driver.memory as its ConfigEntry (bytesConf(ByteUnit.MiB),
// JavaUtils.byteStringAs) does: a number with an optional k, m, g or t suffix, mebibytes
// without one.
func mebibytes(v string) (int64, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	shift := map[byte]int{'k': -10, 'm': 0, 'g': 10, 't': 20}
	unit := 0
	if n := len(v); n > 0 {
		if sh, ok := shift[v[n-1]]; ok {
			unit, v = sh, v[:n-1]
		} else if n > 1 && v[n-1] == 'b' {
			if sh, ok := shift[v[n-2]]; ok {
				unit, v = sh, v[:n-2]
			}
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	if unit < 0 {
		return n >> -unit, nil
	}
	return n << unit, nil
}
