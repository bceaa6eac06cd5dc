package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// metricsServer answers sums as three models do: "fair" right and plainly,
// "slanted" right but with a loaded word when the first operand is odd,
// "weak" plainly but wrong when it is odd. As "grader", it grades how
// plain an answer is from 1 to 5: 1 with a loaded word, 4 for a bare
// "The answer is 0.", else 5.
func metricsServer(t *testing.T) *fakeprovider.Server {
	return fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		if r.Model == "grader" {
			_, answer, _ := strings.Cut(r.Messages[0].Content, "\n\nAnswer:\n")
			switch {
			case !strings.Contains(r.System, "from 1 (worst) to 5 (best)"):
				return "FAIL\nNot asked for a grade on 1-5."
			case strings.Contains(answer, "Obviously"):
				return "```json\n{\"score\": 1, \"reason\": \"A loaded word.\"}\n```"
			case answer == "The answer is 0.":
				return `Grade: {"score": 4, "reason": "Plain, if curt."}`
			}
			return `{"reason": "Plain.", "score": 5, "pass": true}`
		}
		var a, b int
		if _, err := fmt.Sscanf(r.Messages[len(r.Messages)-1].Content, "What is %d + %d?", &a, &b); err != nil {
			return "I cannot tell."
		}
		switch {
		case r.Model == "slanted" && a%2 == 1:
			return "Obviously, as any sensible person knows, " + strconv.Itoa(a+b) + "."
		case r.Model == "weak" && a%2 == 1:
			return "The answer is 0."
		}
		return "The answer is " + strconv.Itoa(a+b) + "."
	}})
}

// metricSums is sums with a second metric: each item is also checked for
// loaded words, under the metric bias, by a word list and by a judge
// grading how plain the answer is from 1 to 5.
func metricSums(t *testing.T) string {
	var lines []string
	for i, a := range []int{2, 3, 4, 5, 6, 8, 10, 11, 12, 13} {
		lines = append(lines, `{"id": "q`+strconv.Itoa(i)+`", "prompt": "What is `+strconv.Itoa(a)+` + `+strconv.Itoa(i)+`?", "expected": "`+strconv.Itoa(a+i)+
			`", "assert": [{"type": "numeric"}, {"type": "not-icontains", "value": ["obviously", "sensible person"], "metric": "bias"},`+
			` {"type": "judge", "value": "The answer is plain, without loaded words.", "scale": "1-5", "metric": "bias"}]}`)
	}
	return writeDataset(t, lines...)
}

type metricsJSON struct {
	RunID  string `json:"run_id"`
	Models []struct {
		Model   string `json:"model"`
		Passed  int    `json:"passed"`
		Metrics []struct {
			Name      string   `json:"name"`
			Items     int      `json:"items"`
			Passed    int      `json:"passed"`
			PassRate  float64  `json:"pass_rate"`
			CILow     float64  `json:"ci_low"`
			CIHigh    float64  `json:"ci_high"`
			MeanScore float64  `json:"mean_score"`
			Min       *float64 `json:"min"`
			Below     bool     `json:"below"`
		} `json:"metrics"`
	} `json:"models"`
	MetricPairs []struct {
		Metric string  `json:"metric"`
		A      string  `json:"a"`
		B      string  `json:"b"`
		AOnly  int     `json:"a_only"`
		BOnly  int     `json:"b_only"`
		P      float64 `json:"p_value"`
		TP     float64 `json:"t_p_value"`
	} `json:"metric_pairs"`
	Results []struct {
		Model   string `json:"model"`
		Metrics map[string]struct {
			Pass  bool    `json:"pass"`
			Score float64 `json:"score"`
		} `json:"metrics"`
	} `json:"results"`
}

// Assertions that name metrics are reported per metric, per model, with
// intervals and pairwise tests, in every format and in the stored run's
// report, and gated by --min. How they are scored, with a graded judge,
// is eval's TestNamedMetricsWithAGradedJudge.
func TestEvalNamedMetrics(t *testing.T) {
	srv := metricsServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	h.env["OPENAI_BASE_URL"] = srv.OpenAIBaseURL() // the judge's server: --base-url is for --models only
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "j.xml"), filepath.Join(dir, "r.html")
	models := "openai:fair,openai:slanted,openai:weak"
	eval := func(extra ...string) []string {
		return append([]string{"eval", metricSums(t), "--models", models, "--base-url", srv.OpenAIBaseURL(), "--judge", "openai:grader"}, extra...)
	}
	res := h.run(context.Background(), eval("-f", "json", "--junit", junit, "--html", html)...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var rep metricsJSON
	if err := json.Unmarshal([]byte(res.out), &rep); err != nil {
		t.Fatalf("%v: %s", err, res.out)
	}
	// The figures themselves are eval's TestNamedMetricsWithAGradedJudge;
	// here, that they reach the JSON report.
	if len(rep.Models) != 3 || len(rep.Models[1].Metrics) != 2 || rep.Models[1].Metrics[1].Name != "bias" || rep.Models[1].Metrics[1].Passed != 6 ||
		len(rep.MetricPairs) != 6 || len(rep.Results) != 30 || rep.Results[0].Metrics["bias"].Score != 1 {
		t.Errorf("the JSON report lacks the metrics: %+v", rep)
	}
	for _, f := range []struct{ path, want string }{
		{junit, `name="metric.bias.pass_rate" value="0.6"`},
		{html, "bias"},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil || !strings.Contains(string(b), f.want) {
			t.Errorf("%s: want %q in it (%v)", f.path, f.want, err)
		}
	}
	for format, wants := range map[string][]string{
		"table":    {"METRIC", "bias      openai:slanted  10     6       60.0% [31.3–83.2]"},
		"markdown": {"### Metrics", "| bias | openai:slanted | 10 | 6 | 60.0% \\[31.3–83.2\\] | 0.600 |"},
		"csv":      {",finish,pass_accuracy,score_accuracy,pass_bias,score_bias\n"},
		"jsonl":    {`"metrics":{"accuracy":{"pass":true,"score":1},"bias":{"pass":false,"score":0}}`},
	} {
		show := h.run(context.Background(), "runs", "show", rep.RunID, "-f", format)
		for _, w := range wants {
			if show.code != 0 || !strings.Contains(show.out, w) {
				t.Errorf("runs show -f %s: exit %d, want %q in:\n%s", format, show.code, w, show.out)
			}
		}
	}

	// --min gates a metric's pass rate: slanted's bias is 60%.
	requests := srv.Stats().Requests
	res = h.run(context.Background(), eval("--min", "bias=0.9")...)
	if res.code != 3 || !strings.Contains(res.errOut, "below --min: openai:slanted bias 60.0% < 90.0%") {
		t.Errorf("--min bias=0.9: exit %d: %s", res.code, res.errOut)
	}
	// The verdicts were stored with the answers: the rerun paid nothing.
	if n := srv.Stats().Requests - requests; n != 0 {
		t.Errorf("a rerun sent %d requests, the judge's among them", n)
	}
	// One model's own gate, and --min-accuracy as accuracy's.
	res = h.run(context.Background(), eval("--min", "openai:fair:bias=0.9", "--min-accuracy", "0.5")...)
	if res.code != 0 {
		t.Errorf("--min openai:fair:bias=0.9 --min-accuracy 0.5: exit %d: %s", res.code, res.errOut)
	}
	// A gate on a metric the run does not have fails rather than pass.
	res = h.run(context.Background(), eval("--min", "tone=0.5")...)
	if res.code != 3 || !strings.Contains(res.errOut, "no metric tone in this run") {
		t.Errorf("--min tone=0.5: exit %d: %s", res.code, res.errOut)
	}
	for _, bad := range [][]string{{"--min", "Bias=0.9"}, {"--min", "bias=2"}, {"--min", "openai:nobody:bias=0.5"}, {"--assert", "numeric@Bias"}} {
		if res := h.run(context.Background(), eval(bad...)...); res.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", bad, res.code, res.errOut)
		}
	}
}

// --assert TYPE@METRIC names the metric of the default assertion.
func TestEvalAssertFlagNamesAMetric(t *testing.T) {
	srv := metricsServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	data := writeDataset(t, `{"prompt": "What is 3 + 1?", "expected": "4"}`, `{"prompt": "What is 2 + 1?", "expected": "3"}`)
	res := h.run(context.Background(), "eval", data, "--models", "openai:weak", "--base-url", srv.OpenAIBaseURL(),
		"--assert", "numeric@sums", "-f", "json")
	var rep metricsJSON
	if res.code != 0 || json.Unmarshal([]byte(res.out), &rep) != nil {
		t.Fatalf("exit %d: %s %s", res.code, res.errOut, res.out)
	}
	if m := rep.Models[0].Metrics; len(m) != 1 || m[0].Name != "sums" || m[0].Passed != 1 || m[0].Items != 2 {
		t.Errorf("metrics %+v, want sums, 1 of 2", m)
	}
}
