package workflows

// Workflow ids are meaningful so that Temporal refuses a duplicate start
// (and the database refuses duplicate rows): the same job always gets the
// same id. Every id is built here.
