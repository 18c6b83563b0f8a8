// Package openfeature is an OpenFeature provider over the expd Go client:
// an experiment is a flag, its string value the user's variant and its
// object value the variant's variables. Every decision is the client's local
// one (no network call per evaluation); an after-evaluation hook records the
// exposure, so an evaluation that ends in an error records nothing.
//
// It lives in a module of its own so that github.com/expd/expd/sdk/go stays
// standard-library only.
package openfeature

import (
	"context"
	"fmt"

	"github.com/open-feature/go-sdk/openfeature"

	expd "github.com/expd/expd/sdk/go"
)

// Reasons maps each expd reason code to OpenFeature's reason.
var Reasons = map[expd.ReasonCode]openfeature.Reason{
	expd.ReasonBucketed:    openfeature.SplitReason,
	expd.ReasonPinned:      openfeature.TargetingMatchReason,
	expd.ReasonNotTargeted: openfeature.DefaultReason,
	expd.ReasonHoldout:     openfeature.DefaultReason,
	expd.ReasonLayer:       openfeature.DefaultReason,
	expd.ReasonNotRunning:  openfeature.DisabledReason,
	expd.ReasonShipped:     openfeature.StaticReason,
}

// Flag metadata keys every successful evaluation carries.
const (
	MetadataInExperiment = "inExperiment"
	MetadataReasonCode   = "reasonCode"
)

// Provider is the expd OpenFeature provider. Build it with New.
type Provider struct {
	client *expd.Client
	hook   exposureHook
}

// New returns a provider over client (which the caller keeps and closes).
func New(client *expd.Client) *Provider {
	return &Provider{client: client, hook: exposureHook{client: client}}
}

// Metadata names the provider.
func (p *Provider) Metadata() openfeature.Metadata { return openfeature.Metadata{Name: "expd"} }

// Hooks returns the hook that records exposures after successful evaluations.
func (p *Provider) Hooks() []openfeature.Hook { return []openfeature.Hook{p.hook} }

// Init waits for the first config (until ctx ends), so SetProviderAndWait
// reports a provider that cannot load one (server down, key refused).
func (p *Provider) Init(openfeature.EvaluationContext) error {
	return p.InitWithContext(context.Background(), openfeature.EvaluationContext{})
}

// InitWithContext is Init bounded by ctx.
func (p *Provider) InitWithContext(ctx context.Context, _ openfeature.EvaluationContext) error {
	if err := p.client.WaitReady(ctx); err != nil {
		return fmt.Errorf("expd: no config loaded: %w", err)
	}
	return nil
}

// Shutdown does nothing: the client belongs to the caller.
func (p *Provider) Shutdown() {}

// ShutdownWithContext does nothing: the client belongs to the caller.
func (p *Provider) ShutdownWithContext(context.Context) error { return nil }

// StringEvaluation answers the user's variant.
func (p *Provider) StringEvaluation(ctx context.Context, flag string, defaultValue string, flat openfeature.FlattenedContext) openfeature.StringResolutionDetail {
	d, detail := p.decide(ctx, flag, flat)
	if detail.ResolutionError != (openfeature.ResolutionError{}) {
		return openfeature.StringResolutionDetail{Value: defaultValue, ProviderResolutionDetail: detail}
	}
	return openfeature.StringResolutionDetail{Value: d.Variant, ProviderResolutionDetail: detail}
}

// ObjectEvaluation answers the variant's variables (a map), or defaultValue
// when the variant has none, as GetVariables does.
func (p *Provider) ObjectEvaluation(ctx context.Context, flag string, defaultValue any, flat openfeature.FlattenedContext) openfeature.InterfaceResolutionDetail {
	d, detail := p.decide(ctx, flag, flat)
	value := defaultValue
	if detail.ResolutionError == (openfeature.ResolutionError{}) {
		if vars := p.client.VariablesOf(flag, d.Variant); vars != nil {
			value = vars
		}
	}
	return openfeature.InterfaceResolutionDetail{Value: value, ProviderResolutionDetail: detail}
}

// BooleanEvaluation is a type mismatch: an experiment is a string or an object flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, defaultValue bool, _ openfeature.FlattenedContext) openfeature.BoolResolutionDetail {
	return openfeature.BoolResolutionDetail{Value: defaultValue, ProviderResolutionDetail: mismatch(flag)}
}

// FloatEvaluation is a type mismatch: an experiment is a string or an object flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, defaultValue float64, _ openfeature.FlattenedContext) openfeature.FloatResolutionDetail {
	return openfeature.FloatResolutionDetail{Value: defaultValue, ProviderResolutionDetail: mismatch(flag)}
}

// IntEvaluation is a type mismatch: an experiment is a string or an object flag.
func (p *Provider) IntEvaluation(_ context.Context, flag string, defaultValue int64, _ openfeature.FlattenedContext) openfeature.IntResolutionDetail {
	return openfeature.IntResolutionDetail{Value: defaultValue, ProviderResolutionDetail: mismatch(flag)}
}

func mismatch(flag string) openfeature.ProviderResolutionDetail {
	return errorDetail(openfeature.NewTypeMismatchResolutionError(
		fmt.Sprintf("expd: %s is an experiment: read it as a string (the variant) or an object (its variables)", flag)))
}

func errorDetail(err openfeature.ResolutionError) openfeature.ProviderResolutionDetail {
	return openfeature.ProviderResolutionDetail{ResolutionError: err, Reason: openfeature.ErrorReason}
}

// decide is the client's decision without an exposure, as resolution detail.
func (p *Provider) decide(ctx context.Context, flag string, flat openfeature.FlattenedContext) (expd.Decision, openfeature.ProviderResolutionDetail) {
	if !p.client.Ready() {
		return expd.Decision{}, errorDetail(openfeature.NewProviderNotReadyResolutionError("expd: config not loaded yet"))
	}
	user, _ := flat[openfeature.TargetingKey].(string)
	if user == "" {
		return expd.Decision{}, errorDetail(openfeature.NewTargetingKeyMissingResolutionError("expd: the evaluation context needs a targeting key (the user id)"))
	}
	d, ok := p.client.PeekDetail(expd.WithAttributes(ctx, attributesOf(flat)), flag, user)
	if !ok {
		return expd.Decision{}, errorDetail(openfeature.NewFlagNotFoundResolutionError(fmt.Sprintf("expd: no experiment %s in the config", flag)))
	}
	reason, known := Reasons[d.ReasonCode]
	if !known {
		reason = openfeature.UnknownReason
	}
	return d, openfeature.ProviderResolutionDetail{
		Reason:  reason,
		Variant: d.Variant,
		FlagMetadata: openfeature.FlagMetadata{
			MetadataInExperiment: d.InExperiment,
			MetadataReasonCode:   string(d.ReasonCode),
		},
	}
}

// attributesOf is the evaluation context without its targeting key: the
// user's attributes, which the experiment's targeting reads.
func attributesOf(flat openfeature.FlattenedContext) map[string]any {
	attrs := make(map[string]any, len(flat))
	for k, v := range flat {
		if k != openfeature.TargetingKey {
			attrs[k] = v
		}
	}
	return attrs
}

// exposureHook records the exposure once the SDK hands a value over, for
// users the experiment counts; the client keeps it to one per user and day.
type exposureHook struct {
	openfeature.UnimplementedHook
	client *expd.Client
}

func (h exposureHook) After(ctx context.Context, hc openfeature.HookContext, details openfeature.InterfaceEvaluationDetails, _ openfeature.HookHints) error {
	if details.ErrorCode != "" {
		return nil
	}
	if in, _ := details.FlagMetadata[MetadataInExperiment].(bool); !in {
		return nil
	}
	ec := hc.EvaluationContext()
	if user := ec.TargetingKey(); user != "" {
		h.client.AssignDetail(expd.WithAttributes(ctx, ec.Attributes()), hc.FlagKey(), user)
	}
	return nil
}
