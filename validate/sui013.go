package validate

import "github.com/sparkui/sparkui/internal/sparkconf"

// checkSUI013: noted so a reader of the results knows which identity the runtime will use
// (in driver-only mode the UI reports a local-… id, so it matches on the Pod name).
func checkSUI013(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		switch {
		case a.Settings.DriverOnly:
			out = append(out, Finding{Object: a.Pod,
				Msg: "driver-only mode (" + sparkconf.KeyDriverMaster + "=" + a.Props[sparkconf.KeyDriverMaster] + "): supported; the runtime identifies the UI by the Pod name"})
		case a.Settings.ClientMode:
			out = append(out, Finding{Object: a.Pod, Msg: "client mode (" + sparkconf.KeyDeployMode + "=client): supported"})
		}
	}
	return out
}
