package dashboard

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/layers"
)

type layersView struct {
	Layers []experiments.Space
}

// GET /layers: the org's layers, each with the ranges its experiments
// hold and its free space (docs/targeting.md, "Layers"), as
// GET /v1/layers answers.
func (d *Dashboard) layersPage(c *gin.Context) {
	ctx := c.Request.Context()
	list, err := layers.Store{DB: d.deps.DB}.List(ctx, orgID(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	view := layersView{Layers: make([]experiments.Space, 0, len(list))}
	for _, l := range list {
		space, err := experiments.Store{DB: d.deps.DB}.Space(ctx, orgID(c), l)
		if err != nil {
			d.fail(c, err)
			return
		}
		view.Layers = append(view.Layers, space)
	}
	d.render(c, http.StatusOK, "layers", "Layers", "layers", view)
}
