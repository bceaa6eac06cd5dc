package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
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
// paid for out of the run's --max-cost. A reply that cannot be read is
// asked about once more, the same conversation with the reply and a
// reminder of the format (stored and paid for like the first), and a
// second unreadable reply is the item's scoring error, naming the judge
// and the reply's start: never a score made up.
func (r *runner) judge(m target.Target) score.Judge {
	eng := m.Engine(r.setup())
	r.judgeEngine = eng
	return func(ctx context.Context, q score.JudgeRequest) (score.Verdict, error) {
		req, k := judgeRequest(m, q)
		text, err := r.askJudge(ctx, m, eng, req, k)
		if err != nil {
			return score.Verdict{}, err
		}
		v, err := readVerdict(text, q.Scale)
		if err == nil {
			return v, nil
		}
		req, k = judgeRetry(m, req, text, q.Scale)
		text, err = r.askJudge(ctx, m, eng, req, k)
		if err != nil {
			return score.Verdict{}, err
		}
		v, err = readVerdict(text, q.Scale)
		if err != nil {
			return score.Verdict{}, fmt.Errorf("judge %s: its reply could not be read, asked twice: %v. Try: a --judge model that keeps to the format", m.Spec, err)
		}
		return v, nil
	}
}

// askJudge returns the grading model's reply to req, stored under k: the
// stored one if there is one, else asked for, paid for and stored.
func (r *runner) askJudge(ctx context.Context, m target.Target, eng engine.Runner, req provider.Request, k string) (string, error) {
	text, err, _ := r.verdicts.Do(k, func() (any, error) { return r.askJudgeOnce(ctx, m, eng, req, k) })
	if err != nil {
		return "", err
	}
	return text.(string), nil
}

// askJudgeOnce is askJudge for the one goroutine of the run asking for k.
func (r *runner) askJudgeOnce(ctx context.Context, m target.Target, eng engine.Runner, req provider.Request, k string) (string, error) {
	st := r.o.Store
	if st != nil {
		stored, release, err := r.claimVerdict(ctx, m, k)
		if err != nil {
			return "", err
		}
		if stored != nil {
			return stored.Answer, nil
		}
		defer release()
	}
	worst := r.o.Batch.Worst(m.Price, m.SyncPrice).Cost(m.InputTokens(r.o.Tokenizer.Count, req), provider.OutputCap(req))
	if !r.spend.TryReserve(k, worst) {
		return "", fmt.Errorf("judge %s: not asked, --max-cost $%g reached", m.Spec, r.o.MaxCost)
	}
	o := eng.Do(ctx, engine.Task{Key: k, Request: req})
	u := o.Response.Usage
	cost := r.o.Batch.Price(o, m.Price, m.SyncPrice).CostOf(u)
	if errors.Is(o.Err, engine.ErrPending) {
		r.spend.Owe(k)
	} else {
		r.spend.Record(k, cost, o.Err == nil)
	}
	if o.Err == nil {
		r.judgeMu.Lock()
		r.out.JudgeVerdicts++
		r.out.JudgeCostUSD += cost
		r.judgeMu.Unlock()
	}
	if o.Err != nil {
		return "", fmt.Errorf("judge %s: %w", m.Spec, o.Err)
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
			return "", err
		}
	}
	return o.Response.Text, nil
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
// the key its verdict is stored under. The PASS or FAIL request is the
// one digest has always sent, so that verdicts stored before graded
// judges keep their keys; a graded one differs by its system prompt,
// which names the scale.
func judgeRequest(m target.Target, q score.JudgeRequest) (provider.Request, string) {
	system := judgeSystem
	if q.Scale != nil {
		system = gradedSystem(*q.Scale)
	}
	req := provider.Request{Model: m.Spec.Model, System: system, MaxTokens: judgeMaxTokens, CachePrefix: true, Messages: []provider.Message{{Role: "user",
		Content: fmt.Sprintf("Rubric:\n%s\n\nQuestion:\n%s\n\nAnswer:\n%s", q.Rubric, q.Question, q.Answer)}}}
	return req, judgeKey(m, req)
}

func judgeKey(m target.Target, req provider.Request) string {
	return key.Request{Provider: m.Spec.Provider, BaseURL: key.BaseURL(m.BaseURL), Model: m.Spec.Model, MaxTokens: req.MaxTokens,
		System: req.System, Messages: req.Messages}.Key()
}

// gradedSystem is the system prompt of a graded judge. The offline judge
// (internal/provider/offline) reads the scale from its first line.
func gradedSystem(sc dataset.Scale) string {
	return fmt.Sprintf(`You grade answers. Given a rubric, a question and an answer, score the answer from %d (worst) to %d (best) by the rubric alone.
Reply with only a JSON object: {"score": N, "reason": "one sentence saying why"}, N a number from %d to %d.`, sc.Lo, sc.Hi, sc.Lo, sc.Hi)
}

// judgeRetry is the second request for a verdict whose reply could not be
// read: the same conversation, the reply, and a reminder of the format.
func judgeRetry(m target.Target, req provider.Request, reply string, sc *dataset.Scale) (provider.Request, string) {
	remind := "Your reply could not be read. Reply with PASS or FAIL on the first line, then one sentence saying why."
	if sc != nil {
		remind = fmt.Sprintf(`Your reply could not be read. Reply with only a JSON object: {"score": N, "reason": "one sentence saying why"}, N a number from %d to %d.`, sc.Lo, sc.Hi)
	}
	retry := req
	retry.Messages = append(slices.Clip(req.Messages), provider.Message{Role: "assistant", Content: reply}, provider.Message{Role: "user", Content: remind})
	return retry, judgeKey(m, retry)
}

// judgeMaxTokens bounds a verdict: PASS or FAIL and a sentence, or a
// graded judge's small JSON object.
const judgeMaxTokens = 200

// estimateJudge counts, for a dry run, the verdicts scoring would ask for:
// exactly for an answer already stored (whose verdict may be stored too),
// and at the graded model's output cap for one not yet asked for, graded
// judges alike. A second request for an unreadable reply is not counted:
// whether one is needed is known only from the reply. The judge it
// returns passes everything, so that every judge assertion of an item is
// counted.
func (r *runner) estimateJudge(m target.Target, est *Estimate, unknownAnswer *int) score.Judge {
	return func(ctx context.Context, q score.JudgeRequest) (score.Verdict, error) {
		pass := score.Verdict{Pass: true}
		if q.Scale != nil {
			pass.Score = float64(q.Scale.Hi)
		}
		req, k := judgeRequest(m, q)
		if r.o.Store != nil {
			found, err := r.o.Store.EvalResults(ctx, []string{k})
			if err != nil {
				return score.Verdict{}, err
			}
			if _, ok := found[k]; ok {
				est.Cached++
				return pass, nil
			}
		}
		est.Requests++
		est.InputTokens += m.InputTokens(r.o.Tokenizer.Count, req) + *unknownAnswer
		est.MaxOutputTokens += provider.OutputCap(req)
		return pass, nil
	}
}

// readVerdict reads a grader's reply: PASS or FAIL without a scale, the
// score and reason of a graded judge with one.
func readVerdict(text string, sc *dataset.Scale) (score.Verdict, error) {
	if sc == nil {
		pass, reason, err := verdict(text)
		return score.Verdict{Pass: pass, Reason: reason}, err
	}
	n, reason, err := gradedVerdict(text, *sc)
	return score.Verdict{Score: n, Reason: reason}, err
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

// gradedVerdict reads a graded judge's reply: the first JSON object in it
// with a "score" (code fences and words around it are passed over), the
// score a number, or a string holding one, on the scale, and "reason" a
// string if given. At most maxObjects openings are tried, so a reply of
// many braces costs little.
func gradedVerdict(text string, sc dataset.Scale) (float64, string, error) {
	t := strings.TrimSpace(text)
	rest := t
	for range maxObjects {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		rest = rest[i:]
		var obj struct {
			Score  json.RawMessage `json:"score"`
			Reason any             `json:"reason"`
		}
		dec := json.NewDecoder(strings.NewReader(rest))
		if err := dec.Decode(&obj); err != nil || obj.Score == nil {
			rest = rest[1:]
			continue
		}
		n, ok := scoreNumber(obj.Score)
		if !ok {
			return 0, "", fmt.Errorf("the judge's score %.40s is not a number: %.80q", obj.Score, t)
		}
		if !sc.Contains(n) {
			return 0, "", fmt.Errorf("the judge's score %s is not on the scale %s: %.80q", strconv.FormatFloat(n, 'g', -1, 64), sc, t)
		}
		reason, _ := obj.Reason.(string)
		return n, strings.TrimSpace(reason), nil
	}
	return 0, "", fmt.Errorf(`the judge answered no JSON object with a "score": %.80q`, t)
}

// maxObjects bounds the JSON objects gradedVerdict tries in one reply.
const maxObjects = 32

// scoreNumber reads a score: a JSON number, or a string holding one.
func scoreNumber(raw json.RawMessage) (float64, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(strings.TrimSpace(s))
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false
	}
	return n, true
}
