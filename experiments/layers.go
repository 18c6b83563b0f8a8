package experiments

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/expd/expd/layers"
	"github.com/expd/expd/validate"
)

// layerFixed says why an experiment's layer and range never change.
const layerFixed = "cannot change: an experiment's layer and range are set at creation only; moving a range would move the users it holds to other experiments of the layer"

// reserveRange checks, inside the creating transaction, that p names a
// layer of the org and that its range covers at least one bucket and
// overlaps no range held by another experiment of the layer. The layer's
// row stays locked until tx ends, so two creations in one layer cannot
// both pass.
func reserveRange(tx *gorm.DB, orgID string, p *LayerPlacement) error {
	l, err := layers.Lock(tx, orgID, p.ID)
	if errors.Is(err, layers.ErrNotFound) {
		return validate.New("layer.id", "no layer %s in this org", p.ID)
	}
	if err != nil {
		return err
	}
	if slot := l.Slot(p.Range[0], p.Range[1]); slot.Start >= slot.End {
		return validate.New("layer.range", "covers no bucket of the layer's %d", l.BucketCount)
	}
	holders, err := inLayer(tx, orgID, l.ID)
	if err != nil {
		return err
	}
	for _, h := range holders {
		if r := h.Layer.Span(); r.Overlaps(p.Span()) {
			return validate.New("layer.range", "overlaps [%g, %g], held by experiment %s (%s)", r.Start, r.End, h.Name, h.ID)
		}
	}
	return nil
}

// InLayer returns the experiments holding a range of the layer, at their
// current version: every experiment of it but the shipped ones (shipping
// frees a range; docs/targeting.md, "Layers").
func (s Store) InLayer(ctx context.Context, orgID, layerID string) ([]Experiment, error) {
	return inLayer(s.DB.WithContext(ctx), orgID, layerID)
}

func inLayer(db *gorm.DB, orgID, layerID string) ([]Experiment, error) {
	var rows []Row
	if err := db.Where("org_id = ? AND layer_id = ? AND status <> ?", orgID, layerID, StatusShipped).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("experiments of layer %s: %w", layerID, err)
	}
	out := make([]Experiment, 0, len(rows))
	for _, r := range rows {
		e, err := currentView(db, r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Holder is an experiment holding a range of a layer.
type Holder struct {
	ID     string    `json:"id"`
	Name   string    `json:"name"`
	Status string    `json:"status"`
	Range  []float64 `json:"range"`
}

// Share is the part of the layer the range covers.
func (h Holder) Share() float64 {
	if len(h.Range) != 2 {
		return 0
	}
	return h.Range[1] - h.Range[0]
}

// Space is a layer with who holds which range of it and what is free:
// the answer of GET /v1/layers/{id} and the dashboard's layers page.
type Space struct {
	layers.Layer
	Experiments []Holder `json:"experiments"`
	// Free lists the ranges no experiment holds, in order.
	Free [][2]float64 `json:"free"`
	// FreeShare is the part of the layer that is free (0 to 1).
	FreeShare float64 `json:"free_share"`
}

// Space returns the layer's holders and free ranges.
func (s Store) Space(ctx context.Context, orgID string, l layers.Layer) (Space, error) {
	holders, err := s.InLayer(ctx, orgID, l.ID)
	if err != nil {
		return Space{}, err
	}
	out := Space{Layer: l, Experiments: make([]Holder, 0, len(holders)), Free: [][2]float64{}}
	taken := make([]layers.Range, 0, len(holders))
	for _, h := range holders {
		out.Experiments = append(out.Experiments, Holder{ID: h.ID, Name: h.Name, Status: h.Status, Range: h.Layer.Range})
		taken = append(taken, h.Layer.Span())
	}
	for _, r := range layers.Free(taken) {
		out.Free = append(out.Free, [2]float64{r.Start, r.End})
		out.FreeShare += r.End - r.Start
	}
	return out, nil
}
