package workflows

// Workflow ids are meaningful so that Temporal refuses a duplicate start
// (and the database refuses duplicate rows): the same job always gets the
// same id. Every id is built here.

// KeyRotationID is the one rotation of an org's key scope that may run at a
// time: keys/<org>/<scope>.
func KeyRotationID(orgID, scope string) string {
	return "keys/" + orgID + "/" + scope
}
