package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/validate"
)

// holdoutList is the answer of GET /v1/holdouts.
type holdoutList struct {
	Holdouts []holdouts.Holdout `json:"holdouts"`
}

func (h *handlers) holdoutStore() holdouts.Store { return holdouts.Store{DB: h.deps.DB} }

// POST /v1/holdouts (admin, additive): a new holdout; it mints a config
// version (the config carries it to every experiment in its scope).
func (h *handlers) createHoldout(c *gin.Context) {
	var spec holdouts.Spec
	if !decodeJSON(c, &spec) {
		return
	}
	ho, err := h.holdoutStore().Create(c.Request.Context(), orgID(c), session(c).UserID, spec, time.Now())
	if err != nil {
		h.holdoutError(c, err)
		return
	}
	h.deps.SDK.Configs.Expire(orgID(c))
	c.JSON(http.StatusCreated, ho)
}

// GET /v1/holdouts (admin, additive): the org's holdouts, oldest first.
func (h *handlers) listHoldouts(c *gin.Context) {
	list, err := h.holdoutStore().List(c.Request.Context(), orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, holdoutList{Holdouts: list})
}

// GET /v1/holdouts/:id (admin, additive).
func (h *handlers) getHoldout(c *gin.Context) {
	ho, err := h.holdoutStore().Get(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		h.holdoutError(c, err)
		return
	}
	c.JSON(http.StatusOK, ho)
}

// PUT /v1/holdouts/:id (admin, additive): name, description, percent and
// metrics; salt and layer_id are frozen (400 naming the field). A new
// percent applies to users not yet assigned.
func (h *handlers) updateHoldout(c *gin.Context) {
	var spec holdouts.Spec
	if !decodeJSON(c, &spec) {
		return
	}
	ho, err := h.holdoutStore().Update(c.Request.Context(), orgID(c), c.Param("id"), session(c).UserID, spec, time.Now())
	if err != nil {
		h.holdoutError(c, err)
		return
	}
	h.deps.SDK.Configs.Expire(orgID(c))
	c.JSON(http.StatusOK, ho)
}

func (h *handlers) holdoutError(c *gin.Context, err error) {
	switch {
	case validate.Fields(err) != nil:
		invalid(c, err)
	case errors.Is(err, holdouts.ErrNotFound):
		problem(c, http.StatusNotFound, CodeHoldoutNotFound, "no holdout "+strconv.Quote(c.Param("id"))+" in this org")
	case errors.Is(err, holdouts.ErrNameTaken):
		writeProblem(c, Problem{Status: http.StatusBadRequest, Code: CodeNameTaken, Detail: err.Error(),
			Errors: []validate.FieldError{{Field: "name", Reason: "already used by another holdout of this org"}}})
	default:
		internalError(c, err)
	}
}
