package testcluster

import (
	"bufio"
	"encoding/json"
	"os"
	"time"
)

// AuditEvent is one completed request in the API server's audit log, with the fields tests
// count requests by (who, verb, what, answer).
type AuditEvent struct {
	Username, Verb                         string
	Resource, Subresource, Namespace, Name string
	Code                                   int
	// Received is when the API server received the request (requestReceivedTimestamp), and
	// Completed when it sent the whole response (the ResponseComplete stage's stageTimestamp).
	Received, Completed time.Time
	// Reason is the authorizer's reason (the authorization.k8s.io/reason annotation).
	Reason string
}

// ReadAudit calls fn for every ResponseComplete event of the JSON-lines audit log at path (the
// log backend writes one event per stage; counting ResponseComplete counts each request once).
// Lines that are not events are skipped: the log may be read while the API server appends.
func ReadAudit(path string, fn func(AuditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20) // a request object in a RequestResponse event
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource, Subresource, Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			Received    time.Time         `json:"requestReceivedTimestamp"`
			Completed   time.Time         `json:"stageTimestamp"`
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		fn(AuditEvent{Username: ev.User.Username, Verb: ev.Verb, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name,
			Code: ev.ResponseStatus.Code, Received: ev.Received, Completed: ev.Completed,
			Reason: ev.Annotations["authorization.k8s.io/reason"]})
	}
	return sc.Err()
}
