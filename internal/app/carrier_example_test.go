package app_test

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// How Build, once split into indexing and building one application, uses a carrier: detect
// it, read the facts, and write the pod-level additions through the slots.
func ExampleDetectCarrier() {
	objs, _ := kio.FromBytes([]byte(`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: jobs}
spec:
  sparkVersion: 3.5.5
  sparkConf: {spark.ui.port: "4045"}
  driver:
    serviceAccount: spark
`))
	c, err := app.DetectCarrier(objs[0], app.CarrierOptions{KubeflowInjection: app.InjectTemplate})
	if err != nil || c == nil {
		fmt.Println("no carrier:", err)
		return
	}
	settings, _ := c.Settings()
	fmt.Println(c.Kind, c.Injection, c.Prefix(), c.IdentityLabels(), c.ServiceAccount, settings.UIPort)

	inits, path, _ := c.Ensure(app.SlotInitContainers)
	inits.Content = append(inits.Content, yamlx.NewMap("name", "sparkui-runtime", "restartPolicy", "Always"))
	fmt.Println(path + "[0]")
	labels, _, _ := c.Ensure(app.SlotPodLabels)
	for k, v := range c.IdentityLabels() {
		yamlx.SetIfChanged(labels, k, yamlx.NewStr(v))
	}
	fmt.Print(c.Object.MustString())
	// Output:
	// kubeflow template pi-sparkui map[sparkui.dev/application:pi] spark 4045
	// spec.driver.template.spec.initContainers[0]
	// apiVersion: sparkoperator.k8s.io/v1beta2
	// kind: SparkApplication
	// metadata: {name: pi, namespace: jobs}
	// spec:
	//   sparkVersion: 3.5.5
	//   sparkConf: {spark.ui.port: "4045"}
	//   driver:
	//     serviceAccount: spark
	//     template:
	//       spec:
	//         initContainers:
	//         - name: sparkui-runtime
	//           restartPolicy: Always
	//       metadata:
	//         labels:
	//           sparkui.dev/application: pi
}
