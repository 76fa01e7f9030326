package lexical

// lightVerbWeight is the weight of a light verb in a query, against 1 for
// any other term a user types.
const lightVerbWeight = 0.5

// lightVerbs are the stems of the English light verbs and their irregular
// forms: verbs that carry a question's grammar more than its topic ("when
// do we go to the offsite", "what did they make of it", "how do I get
// access"). The commonest of them (be, have, do) are stopwords; these are
// kept as terms, since "go" and "make" can be the topic (the language,
// the tool), but count half in a query: in a small index of short
// documents they are rare enough for BM25 to weigh them like the words a
// question is about.
//
// The reporting verbs (say, tell, mention, talk, describe, share) count
// half too, for the same reason: they frame what a question asks about
// ("what did Caroline say about the agency", "users say the app
// crashes", "the photo shared by John"), and a memory that reports a
// remark holds them whatever the remark was about.
var lightVerbs = map[string]struct{}{}

func init() {
	for _, w := range []string{
		"go", "goe", "went", "gone",
		"get", "got", "gotten",
		"make", "made",
		"take", "took", "taken",
		"come", "came",
		"give", "gave", "given",
		"put",
		"keep", "kept",
		"done",
	} {
		lightVerbs[w] = struct{}{}
	}
	for _, w := range []string{"say", "said", "tell", "told", "mention", "talk", "describe", "share"} {
		lightVerbs[string(stem([]byte(w)))] = struct{}{}
	}
}

// weighLightVerbs lowers the weight of the query's light and reporting
// verbs.
func weighLightVerbs(s *searchScratch) {
	for i := range s.query {
		if _, ok := lightVerbs[s.query[i].text]; ok {
			s.query[i].weight *= lightVerbWeight
		}
	}
}
