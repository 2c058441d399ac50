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
}
