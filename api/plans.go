package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/plans"
)

// listPlans serves the one plan table every limit check reads, as the
// spec's PlanLimit objects (monthly_event_allowance -1: unlimited).
func listPlans(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"plans": plans.All()})
}
