package sparkapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// notHistory tells a live UI from a History Server that lists exactly one in-progress
// application (an event log being written: FsHistoryProvider lists it, completed=false), which
// the listing alone cannot: both answer the same ApplicationInfo shape. Their root contexts
// differ in every Spark version: a live UI's is createRedirectHandler("/", "/jobs/")
// (core/src/main/scala/org/apache/spark/ui/SparkUI.scala, initialize), a 302; a History
// Server's is HistoryPage, a WebUIPage with prefix "" that WebUI.attachPage maps at "/"
// (deploy/history/HistoryServer.scala, initialize, Spark 3.5 and 4.0 alike), a 200 page. A
// 302 to …/jobs/ (with spark.ui.proxyRedirectUri the host and prefix change, never the
// /jobs/ end) keeps the verdict; a 200 page is a History Server; anything else decides nothing
// yet and is asked again.
func (p *Prober) notHistory(ctx context.Context, base string, authed *bool, live Result) Result {
	req, resp, err := p.do(ctx, base+"/", *authed)
	if err != nil {
		return Result{Verdict: classifyTransportError(err), AppID: live.AppID, Detail: "GET / (live UI or History Server?): " + err.Error()}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch loc, _ := resp.Location(); {
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != nil && strings.HasSuffix(loc.Path, "/jobs/"):
		return live
	case resp.StatusCode == http.StatusOK:
		return Result{Verdict: NotLive, AppID: live.AppID, Status: resp.StatusCode, Detail: fmt.Sprintf(
			"lists one in-progress application (%s) but its root page answers %s, not the live UI's redirect to /jobs/: a Spark History Server, not a live application UI", live.AppID, resp.Status)}
	}
	if what, refused := p.refusal(req, resp); refused {
		return Result{Verdict: Denied, AppID: live.AppID, Status: resp.StatusCode, Detail: what + p.filterHint()}
	}
	return Result{Verdict: Unknown, AppID: live.AppID, Status: resp.StatusCode, Detail: "GET / answers " + resp.Status + ": cannot tell a live UI from a History Server yet"}
}
