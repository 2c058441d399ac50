package kubeflowtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/kubeflowtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// run is one submission of the application as the API server holds it.
type run struct {
	app                *unstructured.Unstructured
	pod                *corev1.Pod
	submissionID       string
	driverSvc, confMap string
}

// submitted waits for the application to be SUBMITTED with a submission other than prev
// and its driver Pod labelled with it, then checks what the operator and spark-submit made:
// controller.go submitSparkApplication sets status.submissionID, the Pod name and
// SUBMITTED; reconcileSubmittedSparkApplication reads the Pod's spark-app-selector into
// status.sparkApplicationId (updateDriverState) and creates the UI Service.
func submitted(t *testing.T, c *testcluster.Cluster, op *kubeflowtest.Operator, name, prev string) run {
	t.Helper()
	ctx := testcluster.Context(t, 3*time.Minute)
	var r run
	testcluster.WaitFor(t, 2*time.Minute, "SparkApplication "+name+" SUBMITTED with its driver Pod", func() (bool, string) {
		if err := op.Exited(); err != nil {
			t.Fatal(err)
		}
		app, err := c.Dynamic.Resource(appGVR).Namespace("spark-jobs").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st, _, _ := unstructured.NestedMap(app.Object, "status")
		state, _, _ := unstructured.NestedString(st, "applicationState", "state")
		id, _, _ := unstructured.NestedString(st, "submissionID")
		appID, _, _ := unstructured.NestedString(st, "sparkApplicationId")
		if state != "SUBMITTED" || id == "" || id == prev || appID == "" {
			return false, fmt.Sprintf("state %q, submission %q, application id %q", state, id, appID)
		}
		podName, _, _ := unstructured.NestedString(st, "driverInfo", "podName")
		pod, err := c.Client.CoreV1().Pods("spark-jobs").Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if pod.Labels["sparkoperator.k8s.io/submission-id"] != id {
			return false, "driver Pod of another submission"
		}
		r = run{app: app, pod: pod, submissionID: id}
		return true, ""
	})
	pod, app := r.pod, r.app
	appID, _, _ := unstructured.NestedString(app.Object, "status", "sparkApplicationId")
	// The operator's driver labels (submission.go driverConfOption) and the application's own,
	// Spark's (BasicDriverFeatureStep), and the template's (sparkui's guard label).
	for k, v := range map[string]string{
		names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver,
		"sparkoperator.k8s.io/app-name": name, "sparkoperator.k8s.io/launched-by-spark-operator": "true",
		"team": "data-platform", "sparkui.dev/application": name, "spark-app-name": name,
	} {
		if pod.Labels[k] != v {
			t.Errorf("driver Pod %s label %s=%q, want %q", pod.Name, k, pod.Labels[k], v)
		}
	}
	if _, ok := pod.Labels["sparkoperator.k8s.io/mutated-by-spark-operator"]; ok {
		t.Errorf("driver Pod %s is marked for the webhook although the template carries the injection", pod.Name)
	}
	// driverPodTemplateOption puts the application's controller ownerReference in the template.
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != app.GetUID() || pod.OwnerReferences[0].Kind != "SparkApplication" {
		t.Errorf("driver Pod %s owners %+v, want the SparkApplication %s", pod.Name, pod.OwnerReferences, app.GetUID())
	}
	if pod.Spec.ServiceAccountName != "spark-pi-driver" || !pod.Spec.HostNetwork {
		t.Errorf("driver Pod %s: serviceAccount %q, hostNetwork %t: the template's and driver.serviceAccount lost", pod.Name, pod.Spec.ServiceAccountName, pod.Spec.HostNetwork)
	}
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == names.DriverContainer && (ctr.Lifecycle == nil || ctr.Lifecycle.PreStop == nil || ctr.Image != "spark:3.5.5") {
			t.Errorf("driver container: image %q, lifecycle %+v: want spec.image and the template's preStop", ctr.Image, ctr.Lifecycle)
		}
	}
	// What spark-submit makes besides the Pod, owned by it.
	for _, v := range pod.Spec.Volumes {
		if v.Name == "spark-conf-volume-driver" && v.ConfigMap != nil {
			r.confMap = v.ConfigMap.Name
		}
	}
	cm, err := c.Client.CoreV1().ConfigMaps("spark-jobs").Get(ctx, r.confMap, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("driver conf ConfigMap: %v", err)
	}
	if !ownedBy(cm.OwnerReferences, pod) || !strings.Contains(cm.Data["spark.properties"], `spark.app.id=`+appID) {
		t.Errorf("ConfigMap %s: owners %+v, spark.properties:\n%s", cm.Name, cm.OwnerReferences, cm.Data["spark.properties"])
	}
	svcs, err := c.Client.CoreV1().Services("spark-jobs").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uiSvc, _, _ := unstructured.NestedString(app.Object, "status", "driverInfo", "webUIServiceName")
	var ui bool
	for _, s := range svcs.Items {
		if ownedBy(s.OwnerReferences, pod) && s.Spec.ClusterIP == corev1.ClusterIPNone && s.Spec.Selector[names.LabelAppSelector] == appID {
			r.driverSvc = s.Name
		}
		ui = ui || (uiSvc != "" && s.Name == uiSvc)
	}
	if r.driverSvc == "" {
		t.Errorf("no headless driver Service owned by %s selecting %s", pod.Name, appID)
	}
	// web_ui.go createWebUIService (--enable-ui-service, on by default): <app>-ui-svc.
	if !ui || uiSvc != name+"-ui-svc" {
		t.Errorf("operator UI Service %q (status.driverInfo.webUIServiceName) not found", uiSvc)
	}
	return r
}

func ownedBy(refs []metav1.OwnerReference, pod *corev1.Pod) bool {
	for _, r := range refs {
		if r.Kind == "Pod" && r.UID == pod.UID && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}
