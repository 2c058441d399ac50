package sidecar

// AuthKind is which credential the runtime sends to a UI behind an authentication filter.
type AuthKind string

const (
	// AuthBearer: the Secret's value is a bearer token (--auth-bearer-file).
	AuthBearer AuthKind = "bearer"
	// AuthHeader: the Secret's value is one header line "Name: value" (--auth-header-file).
	AuthHeader AuthKind = "header"
)

// Auth is a credential from a Secret key; the zero value is none.
type Auth struct {
	Kind        AuthKind
	Secret, Key string
}

// File is where the runtime reads the credential, "" when there is none.
func (a Auth) File() string {
	switch a.Kind {
	case AuthBearer:
		return AuthMountPath + "/" + AuthBearerFileName
	case AuthHeader:
		return AuthMountPath + "/" + AuthHeaderFileName
	}
	return ""
}

// Apply sets c's credential file argument for a.
func (a Auth) Apply(c *Config) {
	switch a.Kind {
	case AuthBearer:
		c.AuthBearerFile = a.File()
	case AuthHeader:
		c.AuthHeaderFile = a.File()
	}
}
