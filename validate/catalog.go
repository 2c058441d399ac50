package validate

//go:generate go run ./internal/gendocs

// Rules is the catalog, in ID order: Run applies them in this order, and docs/rules.md and
// the SARIF report list them in it.
var Rules = []Rule{
	SUI001,
	SUI002,
	SUI003,
	SUI004,
	SUI005,
	SUI006,
	SUI007,
	SUI008,
	SUI009,
	SUI010,
	SUI011,
	SUI012,
	SUI013,
	SUI014,
	SUI015,
	SUI016,
	SUI017,
	SUI018,
	SUI019,
	SUI020,
	SUI021,
	SUI022,
	SUI023,
	SUI024,
	SUI030,
	SUI031,
	SUI032,
	SUI033,
	SUI034,
	SUI035,
	SUI036,
	SUI037,
	SUI038,
	SUI039,
	SUI040,
	SUI042,
	SUI044,
	SUI045,
	SUI046,
	SUI047,
	SUI048,
	SUI049,
	SUI050,
	SUI051,
	SUI052,
	SUI053,
	SUI054,
	SUI055,
	SUI060,
	SUI061,
	SUI062,
	SUI063,
	SUI064,
	SUI070,
	SUI071,
	SUI072,
	SUI073,
	SUI074,
}

// Unused are the ids in the catalog's range that no rule has: never assigned, so no result
// ever carried them. docs/rules.md lists them; gendocs fails when an id is neither a rule nor
// here, or both.
var Unused = []UnusedIDs{
	{From: 25, To: 29, Why: "never used: set aside when the carrier rules (SUI030 on) and the runtime-settings rules (SUI017–SUI024) were written in parallel, and not needed"},
	{From: 41, To: 41, Why: "never used: set aside when SUI040 and SUI042 were written in parallel, and not needed"},
	{From: 43, To: 43, Why: "never used: set aside when SUI042 and SUI044 were written in parallel, and not needed"},
	{From: 56, To: 59, Why: "never used: SUI060 was numbered apart from the route-input rules (SUI054, SUI055) written at the same time"},
	{From: 65, To: 69, Why: "never used: SUI070 on were set aside for the baseline comparison, numbered apart from SUI061 and the runtime-image and exposure rules (SUI062–SUI064), written at the same time"},
}

// UnusedIDs is a run of unused ids, SUI<From>…SUI<To>.
type UnusedIDs struct {
	From, To int
	Why      string
}
