// Command argocd-engine compares and syncs one Argo CD Application with Argo CD's own engine,
// github.com/argoproj/argo-cd/gitops-engine (pkg/cache, pkg/sync, pkg/diff), configured the way
// Argo CD's application controller configures it. It is a test tool: runtime/blackbox drives it
// like kubectl against the test control plane (docs/deploy-argocd.md says what it reproduces and
// what it leaves out).
//
//	argocd-engine compare|sync --kubeconfig FILE --app NAME --namespace NS [--server-side-apply] [--server-side-diff] < manifests.yaml
//
// The manifests (a YAML stream, what the repo server or a config management plugin returns) are
// the Application's desired state. It prints one JSON object (type report) on stdout: the
// comparison (Synced/OutOfSync per resource and for the Application, with the fields that
// differ) and, for sync, the operation's phase and per-resource results. Exit 0 when it could
// compare (and, for sync, the operation Succeeded), 1 otherwise, 2 for bad usage.
//
// What is taken from Argo CD (argoproj/argo-cd, read at 37ee0097):
//   - controller/state.go CompareAppState: desired objects get the tracking annotation
//     (util/argo/resource_tracking.go, the default "annotation" method:
//     argocd.argoproj.io/tracking-id = <app>:<group>/<kind>:<namespace>/<name>), live objects come
//     from the cluster cache (GetManagedLiveObjs), sync.Reconcile pairs them, and the diff runs
//     with the field manager common.ArgoCDSSAManager ("argocd-controller"), the cluster's GVK
//     parser, structured-merge diff when the Application syncs with ServerSideApply=true, and a
//     server-side dry-run diff when ServerSideDiff=true. No ignoreDifferences are configured, so
//     util/argo/diff's normalizers change nothing here (its tracking normalization is moot:
//     both sides carry the same annotation).
//   - controller/sync.go SyncAppState: sync.NewSyncContext with the same options a default sync
//     operation gets (no prune, no dry run, no force, manifest validation on, server-side apply
//     as the sync option says, server-side apply manager "argocd-controller", client-side apply
//     migration from "kubectl-client-side-apply"), then Sync until the phase completes.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/tracing"
)

const (
	// argo-cd common/common.go.
	trackingAnnotation = "argocd.argoproj.io/tracking-id"
	ssaManager         = "argocd-controller"
)

// resource is one managed resource of the comparison, as the Application's status lists it.
type resource struct {
	Group     string   `json:"group,omitempty"`
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Status    string   `json:"status"`         // Synced or OutOfSync
	Diff      []string `json:"diff,omitempty"` // "path: live=… desired=…" for each field that differs
}

type syncResult struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  string `json:"status"` // common.ResultCode: Synced, SyncFailed, …
	Message string `json:"message"`
}

type report struct {
	Status    string       `json:"status"` // the Application's sync status
	Resources []resource   `json:"resources"`
	Phase     string       `json:"phase,omitempty"` // the sync operation's phase
	Message   string       `json:"message,omitempty"`
	Results   []syncResult `json:"results,omitempty"`
}

type options struct {
	app, namespace            string
	serverSideApply, ssDiff   bool
	config                    *rest.Config
	log                       logr.Logger
	kubectl                   *kube.KubectlCmd
	targets                   []*unstructured.Unstructured
	syncTimeout               time.Duration
	revision                  string
	clientSideApplyMigrations bool
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "compare" && args[0] != "sync") {
		fmt.Fprintln(stderr, "usage: argocd-engine compare|sync --kubeconfig FILE --app NAME --namespace NS [--server-side-apply] [--server-side-diff] < manifests")
		return 2
	}
	verb := args[0]
	fs := flag.NewFlagSet("argocd-engine "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the destination cluster")
	var o options
	fs.StringVar(&o.app, "app", "", "the Application's name (tracking annotation)")
	fs.StringVar(&o.namespace, "namespace", "", "the Application's destination namespace")
	fs.BoolVar(&o.serverSideApply, "server-side-apply", false, "the sync option ServerSideApply=true")
	fs.BoolVar(&o.ssDiff, "server-side-diff", false, "the compare option ServerSideDiff=true")
	fs.StringVar(&o.revision, "revision", "HEAD", "the revision the sync records")
	fs.DurationVar(&o.syncTimeout, "timeout", 60*time.Second, "give up a sync operation after this long")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *kubeconfig == "" || o.app == "" || o.namespace == "" {
		fmt.Fprintln(stderr, "argocd-engine: --kubeconfig, --app and --namespace are required")
		return 2
	}
	o.clientSideApplyMigrations = true
	o.log = funcr.New(func(prefix, args string) { fmt.Fprintln(stderr, prefix, args) }, funcr.Options{})
	o.kubectl = &kube.KubectlCmd{Log: o.log, Tracer: tracing.NopTracer{}}
	var err error
	if o.config, err = clientcmd.BuildConfigFromFlags("", *kubeconfig); err != nil {
		fmt.Fprintln(stderr, "argocd-engine:", err)
		return 1
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "argocd-engine: reading the manifests:", err)
		return 1
	}
	if o.targets, err = targets(in, o.app); err != nil {
		fmt.Fprintln(stderr, "argocd-engine:", err)
		return 1
	}
	rep, err := compareOrSync(verb, o)
	if rep != nil {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	}
	if err != nil {
		fmt.Fprintln(stderr, "argocd-engine:", err)
		return 1
	}
	return 0
}

// targets parses the desired state and tracks every object as the Application's.
func targets(in []byte, app string) ([]*unstructured.Unstructured, error) {
	objs, err := kube.SplitYAML(in)
	if err != nil {
		return nil, fmt.Errorf("the manifests: %w", err)
	}
	if len(objs) == 0 {
		return nil, errors.New("the manifests hold no object")
	}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[trackingAnnotation] = fmt.Sprintf("%s:%s/%s:%s/%s", app, gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName())
		u.SetAnnotations(ann)
	}
	return objs, nil
}

// compare is CompareAppState's part that matters here: live state from the cluster cache,
// reconciliation, diff. It returns the reconciliation, the diff and the report.
func compare(o options) (sync.ReconciliationResult, *diff.DiffResultList, *report, error) {
	var none sync.ReconciliationResult
	isManaged := func(un *unstructured.Unstructured) bool {
		return strings.HasPrefix(un.GetAnnotations()[trackingAnnotation], o.app+":")
	}
	cc := cache.NewClusterCache(o.config,
		cache.SetNamespaces([]string{o.namespace}),
		cache.SetLogr(o.log),
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			return nil, isManaged(un) // Argo CD keeps the manifests of its Applications' resources
		}))
	if err := cc.EnsureSynced(); err != nil {
		return none, nil, nil, fmt.Errorf("cluster cache: %w", err)
	}
	defer cc.Invalidate()
	live, err := cc.GetManagedLiveObjs(o.targets, func(r *cache.Resource) bool {
		return r.Resource != nil && isManaged(r.Resource)
	})
	if err != nil {
		return none, nil, nil, fmt.Errorf("live state: %w", err)
	}
	rec := sync.Reconcile(o.targets, live, o.namespace, cc)

	opts := []diff.Option{
		diff.WithNormalizer(diff.GetNoopNormalizer()),
		diff.IgnoreAggregatedRoles(false),
		diff.WithStructuredMergeDiff(o.serverSideApply),
		diff.WithGVKParser(cc.GetGVKParser()),
		diff.WithManager(ssaManager),
		diff.WithServerSideDiff(o.ssDiff),
		diff.WithLogr(o.log),
	}
	if o.ssDiff {
		applier, cleanup, err := o.kubectl.ManageServerSideDiffDryRuns(o.config)
		if err != nil {
			return none, nil, nil, err
		}
		defer cleanup()
		opts = append(opts, diff.WithServerSideDryRunner(diff.NewK8sServerSideDryRunner(applier)))
	}
	res, err := diff.DiffArray(rec.Target, rec.Live, opts...)
	if err != nil {
		return none, nil, nil, fmt.Errorf("diff: %w", err)
	}
	rep := &report{Status: "Synced"}
	for i, target := range rec.Target {
		obj := target
		if obj == nil {
			obj = rec.Live[i]
		}
		gvk := obj.GroupVersionKind()
		r := resource{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Status: "Synced"}
		// controller/state.go: OutOfSync when the diff is modified or the live object is missing.
		if res.Diffs[i].Modified || rec.Live[i] == nil || target == nil {
			r.Status = "OutOfSync"
			rep.Status = "OutOfSync"
			r.Diff = fieldDiff(res.Diffs[i].NormalizedLive, res.Diffs[i].PredictedLive)
		}
		rep.Resources = append(rep.Resources, r)
	}
	return rec, res, rep, nil
}

func compareOrSync(verb string, o options) (*report, error) {
	rec, diffs, rep, err := compare(o)
	if err != nil || verb == "compare" {
		return rep, err
	}
	ctx, cleanup, err := sync.NewSyncContext(o.revision, rec, o.config, o.config, o.kubectl, o.namespace,
		sync.WithLogr(o.log),
		sync.WithOperationSettings(false, false, false, false),
		sync.WithManifestValidation(true),
		sync.WithResourceModificationChecker(false, diffs),
		sync.WithServerSideApply(o.serverSideApply),
		sync.WithServerSideApplyManager(ssaManager),
		sync.WithClientSideApplyMigration(o.clientSideApplyMigrations, common.DefaultClientSideApplyMigrationManager),
	)
	if err != nil {
		return rep, err
	}
	defer cleanup()
	deadline := time.Now().Add(o.syncTimeout)
	for {
		ctx.Sync()
		phase, message, results := ctx.GetState()
		if phase.Completed() || time.Now().After(deadline) {
			rep.Phase, rep.Message = string(phase), message
			for _, r := range results {
				rep.Results = append(rep.Results, syncResult{Kind: r.ResourceKey.Kind, Name: r.ResourceKey.Name, Status: string(r.Status), Message: r.Message})
			}
			sort.Slice(rep.Results, func(i, j int) bool {
				return rep.Results[i].Kind+"/"+rep.Results[i].Name < rep.Results[j].Kind+"/"+rep.Results[j].Name
			})
			if phase != common.OperationSucceeded {
				return rep, fmt.Errorf("sync operation %s: %s", phase, message)
			}
			return rep, nil
		}
		// The controller requeues the operation on a resource event or every few seconds.
		time.Sleep(500 * time.Millisecond)
	}
}

// fieldDiff lists the leaves that differ between the normalized live and the predicted live
// object (what Argo CD's diff view shows), with managedFields and status left out.
func fieldDiff(liveJSON, predictedJSON []byte) []string {
	var live, predicted any
	if len(liveJSON) > 0 && !bytes.Equal(liveJSON, []byte("null")) {
		_ = json.Unmarshal(liveJSON, &live)
	}
	if len(predictedJSON) > 0 && !bytes.Equal(predictedJSON, []byte("null")) {
		_ = json.Unmarshal(predictedJSON, &predicted)
	}
	var out []string
	walk("", live, predicted, &out)
	sort.Strings(out)
	return out
}

func walk(path string, live, desired any, out *[]string) {
	if path == ".metadata.managedFields" || path == ".status" || path == ".metadata.resourceVersion" {
		return
	}
	lm, lok := live.(map[string]any)
	dm, dok := desired.(map[string]any)
	if lok && dok {
		keys := map[string]bool{}
		for k := range lm {
			keys[k] = true
		}
		for k := range dm {
			keys[k] = true
		}
		for k := range keys {
			walk(path+"."+k, lm[k], dm[k], out)
		}
		return
	}
	ll, lok := live.([]any)
	dl, dok := desired.([]any)
	if lok && dok && len(ll) == len(dl) {
		for i := range ll {
			walk(fmt.Sprintf("%s[%d]", path, i), ll[i], dl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(live, desired) {
		l, _ := json.Marshal(live)
		d, _ := json.Marshal(desired)
		*out = append(*out, fmt.Sprintf("%s: live=%s desired=%s", path, l, d))
	}
}
