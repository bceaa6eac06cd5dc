package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/target"
)

const judgeSystem = `You grade answers. Given a rubric, a question and an answer, reply with
PASS or FAIL on the first line, then one sentence saying why. Judge only by the rubric.`

// judge returns the verdicts of the grading model, asked through an engine
// of its own (the same limits and retries as every other request), stored
// like any answer (a rerun asks the judge nothing it answered before) and
// paid for out of the run's --max-cost.
func (r *runner) judge(m target.Target) score.Judge {
	eng := m.Engine(r.setup())
	r.judgeEngine = eng
	st := r.o.Store
	return func(ctx context.Context, rubric, question, answer string) (bool, string, error) {
		req, k := judgeRequest(m, rubric, question, answer)
		if st != nil {
			stored, release, err := r.claimVerdict(ctx, m, k)
			if err != nil {
				return false, "", err
			}
			if stored != nil {
				return verdict(stored.Answer)
			}
			defer release()
		}
		worst := r.o.Batch.Worst(m.Price, m.SyncPrice).Cost(m.InputTokens(r.o.Tokenizer.Count, req), provider.OutputCap(req))
		if !r.spend.TryReserve(k, worst) {
			return false, "", fmt.Errorf("judge %s: not asked, --max-cost $%g reached", m.Spec, r.o.MaxCost)
		}
		o := eng.Do(ctx, engine.Task{Key: k, Request: req})
		u := o.Response.Usage
		cost := r.o.Batch.Price(o, m.Price, m.SyncPrice).CostOf(u)
		if errors.Is(o.Err, engine.ErrPending) {
			r.spend.Owe(k)
		} else {
			r.spend.Settle(k, cost, o.Err == nil)
		}
		if o.Err == nil {
			r.judgeMu.Lock()
			r.out.JudgeVerdicts++
			r.out.JudgeCostUSD += cost
			r.judgeMu.Unlock()
		}
		if o.Err != nil {
			return false, "", fmt.Errorf("judge %s: %w", m.Spec, o.Err)
		}
		if st != nil {
			// Stored, and its claim given back in the same transaction,
			// before it is used: a rerun, or a twin answer graded next,
			// finds it and asks the judge nothing again.
			body, _ := json.Marshal(req)
			if err := r.writes.do(write{answers: []store.EvalResult{{Key: k, Model: m.Spec.String(),
				LatencyMS: float64(o.Latency) / float64(time.Millisecond), InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
				CostUSD: cost, Request: body, Answer: o.Response.Text, Finish: finishOf(o.Response.Finish)}}, release: []string{k}}); err != nil {
				return false, "", err
			}
		}
		return verdict(o.Response.Text)
	}
}

// claimVerdict returns the stored verdict under k, or claims k so that no
// other process sharing the database asks the judge the same thing: a
// process that finds another's live claim waits for the verdict to be
// stored (or for the claim to lapse, its holder gone) instead of paying
// for it again. release gives the claim back once the verdict is stored
// or has failed. The offline judge, free and instant, is not claimed.
func (r *runner) claimVerdict(ctx context.Context, m target.Target, k string) (stored *store.EvalResult, release func(), err error) {
	st := r.o.Store
	lookup := func() (*store.EvalResult, error) {
		found, err := st.EvalResults(ctx, []string{k})
		if res, ok := found[k]; ok {
			return &res, err
		}
		return nil, err
	}
	if res, err := lookup(); res != nil || err != nil {
		return res, nil, err
	}
	if m.Spec.Provider == provider.Offline {
		return nil, func() {}, nil
	}
	for {
		won, err := r.leases.Claim(ctx, k)
		if err != nil {
			return nil, nil, err
		}
		// Won or not, look again: the holder may have stored the verdict
		// and let the claim go since the last look.
		res, err := lookup()
		if won && (res != nil || err != nil) {
			r.leases.Release(k)
		}
		if res != nil || err != nil {
			return res, nil, err
		}
		if won {
			return nil, func() { r.leases.Release(k) }, nil
		}
		if err := engine.Sleep(ctx, lease.Poll(r.o.Lease)); err != nil {
			return nil, nil, err
		}
	}
}

// judgeRequest is what the grading model is asked about one answer, and
// the key its verdict is stored under.
func judgeRequest(m target.Target, rubric, question, answer string) (provider.Request, string) {
	req := provider.Request{Model: m.Spec.Model, System: judgeSystem, MaxTokens: judgeMaxTokens, CachePrefix: true, Messages: []provider.Message{{Role: "user",
		Content: fmt.Sprintf("Rubric:\n%s\n\nQuestion:\n%s\n\nAnswer:\n%s", rubric, question, answer)}}}
	k := key.Request{Provider: m.Spec.Provider, BaseURL: key.BaseURL(m.BaseURL), Model: m.Spec.Model, MaxTokens: req.MaxTokens,
		System: req.System, Messages: req.Messages}.Key()
	return req, k
}

// judgeMaxTokens bounds a verdict: PASS or FAIL and a sentence.
const judgeMaxTokens = 200

// estimateJudge counts, for a dry run, the verdicts scoring would ask for:
// exactly for an answer already stored (whose verdict may be stored too),
// and at the graded model's output cap for one not yet asked for. The
// judge it returns passes everything, so that every judge assertion of an
// item is counted.
func (r *runner) estimateJudge(m target.Target, est *Estimate, unknownAnswer *int) score.Judge {
	return func(ctx context.Context, rubric, question, answer string) (bool, string, error) {
		req, k := judgeRequest(m, rubric, question, answer)
		if r.o.Store != nil {
			found, err := r.o.Store.EvalResults(ctx, []string{k})
			if err != nil {
				return false, "", err
			}
			if _, ok := found[k]; ok {
				est.Cached++
				return true, "", nil
			}
		}
		est.Requests++
		est.InputTokens += m.InputTokens(r.o.Tokenizer.Count, req) + *unknownAnswer
		est.MaxOutputTokens += provider.OutputCap(req)
		return true, "", nil
	}
}

// verdict reads PASS or FAIL from the start of a grader's reply.
func verdict(text string) (bool, string, error) {
	t := strings.TrimSpace(text)
	word, rest, _ := strings.Cut(t, "\n")
	word = strings.ToUpper(strings.Trim(strings.TrimSpace(word), "*.:!"))
	reason := strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(word, "PASS"):
		return true, reason, nil
	case strings.HasPrefix(word, "FAIL"):
		return false, cmp.Or(reason, "the judge said FAIL"), nil
	}
	return false, "", fmt.Errorf("the judge answered neither PASS nor FAIL: %.80q", t)
}
