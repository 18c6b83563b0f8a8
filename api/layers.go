package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/layers"
	"github.com/expd/expd/validate"
)

// layerList is the answer of GET /v1/layers.
type layerList struct {
	Layers []experiments.Space `json:"layers"`
}

func (h *handlers) layerStore() layers.Store { return layers.Store{DB: h.deps.DB} }

// POST /v1/layers (admin, additive): a new layer, with no experiment yet.
func (h *handlers) createLayer(c *gin.Context) {
	var spec layers.Spec
	if !decodeJSON(c, &spec) {
		return
	}
	l, err := h.layerStore().Create(c.Request.Context(), orgID(c), session(c).UserID, spec, time.Now())
	if err != nil {
		h.layerError(c, err)
		return
	}
	h.answerLayer(c, http.StatusCreated, l)
}

// GET /v1/layers (admin, additive): the org's layers, oldest first, each
// with the ranges its experiments hold and its free space.
func (h *handlers) listLayers(c *gin.Context) {
	list, err := h.layerStore().List(c.Request.Context(), orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	out := layerList{Layers: make([]experiments.Space, 0, len(list))}
	for _, l := range list {
		space, err := h.experiments.Space(c.Request.Context(), orgID(c), l)
		if err != nil {
			internalError(c, err)
			return
		}
		out.Layers = append(out.Layers, space)
	}
	c.JSON(http.StatusOK, out)
}

// GET /v1/layers/:id (admin, additive).
func (h *handlers) getLayer(c *gin.Context) {
	l, err := h.layerStore().Get(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		h.layerError(c, err)
		return
	}
	h.answerLayer(c, http.StatusOK, l)
}

// PUT /v1/layers/:id (admin, additive): renames or redescribes the layer;
// salt and bucket_count are frozen (400 naming the field).
func (h *handlers) updateLayer(c *gin.Context) {
	var spec layers.Spec
	if !decodeJSON(c, &spec) {
		return
	}
	l, err := h.layerStore().Update(c.Request.Context(), orgID(c), c.Param("id"), session(c).UserID, spec, time.Now())
	if err != nil {
		h.layerError(c, err)
		return
	}
	h.answerLayer(c, http.StatusOK, l)
}

func (h *handlers) answerLayer(c *gin.Context, status int, l layers.Layer) {
	space, err := h.experiments.Space(c.Request.Context(), orgID(c), l)
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(status, space)
}

func (h *handlers) layerError(c *gin.Context, err error) {
	switch {
	case validate.Fields(err) != nil:
		invalid(c, err)
	case errors.Is(err, layers.ErrNotFound):
		problem(c, http.StatusNotFound, CodeLayerNotFound, "no layer "+strconv.Quote(c.Param("id"))+" in this org")
	case errors.Is(err, layers.ErrNameTaken):
		writeProblem(c, Problem{Status: http.StatusBadRequest, Code: CodeNameTaken, Detail: err.Error(),
			Errors: []validate.FieldError{{Field: "name", Reason: "already used by another layer of this org"}}})
	default:
		internalError(c, err)
	}
}
