package uistate

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
)

// carrier names what runs the driver, Kind/name: the top of the driver Pod's controller
// chain as far as the typed clients read it (a ReplicaSet's Deployment, a Job's CronJob; an
// operator's resource is named by the Pod's own ownerReference when the operator sets one).
// Without a Pod, the Service's identity label: a spark-submit Pod, or the carrier's name.
func carrier(ctx context.Context, cs kubernetes.Interface, a *App) string {
	if a.Pod == nil {
		if a.IdentityKey == names.LabelAppSelector {
			return "Pod/" + a.Name + names.DriverPodSuffix
		}
		return app.LabelApplication + "=" + a.IdentityValue
	}
	ref := metav1.GetControllerOf(a.Pod)
	if ref == nil {
		return "Pod/" + a.Pod.Name
	}
	for depth := 0; depth < 4; depth++ {
		var up *metav1.OwnerReference
		switch {
		case ref.Kind == "ReplicaSet" && strings.HasPrefix(ref.APIVersion, "apps/"):
			if rs, err := cs.AppsV1().ReplicaSets(a.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
				up = metav1.GetControllerOf(rs)
			}
		case ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, "batch/"):
			if j, err := cs.BatchV1().Jobs(a.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
				up = metav1.GetControllerOf(j)
			}
		}
		if up == nil {
			break
		}
		ref = up
	}
	return ref.Kind + "/" + ref.Name
}
