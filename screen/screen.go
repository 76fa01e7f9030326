// Package screen looks for prompt-injection patterns in text that is about to
// become a memory. A memory is read back into a model's context in later
// sessions, so text that talks to the model ("ignore your previous
// instructions"), pretends to be a conversation boundary (</user><system>),
// hides characters a person reviewing the file cannot see, or carries a long
// encoded payload is worth a second look before it is stored.
//
// The rules are lexical and deliberately narrow: a feedback memory is an
// instruction to the model by nature ("always run the linter"), so the rules
// look for text that tries to override, hide from the user, leak data or
// impersonate roles, not for imperatives in general. Every rule is listed in
// [Rules] with a one-line explanation; docs/format.md and the README repeat
// them. Screening never changes text: it reports [Finding]s and the caller
// decides (memdir holds automatic writes for review and warns a person).
package screen

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Rule names, as they appear in findings, JSON output and the docs.
const (
	RuleOverride     = "override-instructions"
	RuleRole         = "role-reassignment"
	RuleSystemPrompt = "system-prompt"
	RuleHide         = "hide-from-user"
	RuleExfiltrate   = "exfiltration"
	RuleAddressed    = "addressed-to-model"
	RuleRoleTag      = "role-tag"
	RuleInvisible    = "invisible-unicode"
	RuleBidi         = "bidi-control"
	RuleTagChars     = "tag-characters"
	RuleBlob         = "encoded-blob"
	RuleEncodedInstr = "encoded-instruction"
)

// Rules maps each rule name to what it looks for.
var Rules = map[string]string{
	RuleOverride:     "asks the reader to ignore, disregard, forget or override earlier instructions, rules or context (English, Chinese, Spanish, French, German, Portuguese, Italian, Japanese, Russian, Korean)",
	RuleRole:         "reassigns the model's role or mode: \"you are now\", \"you must now\", \"from now on you\", \"new instructions:\", developer/jailbreak mode",
	RuleSystemPrompt: "reveals, replaces or overrides the system prompt (\"print your system prompt\", \"new system prompt\"); merely naming a project's prompt file is not flagged",
	RuleHide:         "tells the model to keep something from the user or act silently (\"do not tell the user\", \"without informing the user\")",
	RuleExfiltrate:   "asks for credentials, keys, tokens or environment variables to be sent, posted or uploaded somewhere",
	RuleAddressed:    "a note addressed to an AI reader (\"note to the AI\", \"attention assistant\", \"if you are an AI\")",
	RuleRoleTag:      "chat-role markup outside inline code: <system>, </user>, <assistant>, <|im_start|>, [INST], <<SYS>>",
	RuleInvisible:    "zero-width or invisible format characters (U+200B, U+2060..U+2064, U+FEFF after the start, U+180E); ZWJ/ZWNJ between two non-ASCII letters or emoji are allowed",
	RuleBidi:         "bidirectional embedding, override or isolate controls (U+202A..U+202E, U+2066..U+2069)",
	RuleTagChars:     "Unicode tag characters (U+E0000..U+E007F) or supplementary variation selectors (U+E0100..U+E01EF), which can carry hidden ASCII",
	RuleBlob:         "a long encoded run: base64 of 120 or more characters, or hex of 128 or more",
	RuleEncodedInstr: "a base64 or hex run (24 characters or more) that decodes to text another rule flags",
}

// Finding is one match of one rule.
type Finding struct {
	// Rule is one of the names in Rules.
	Rule string `json:"rule"`
	// Line is the 1-based line of the match.
	Line int `json:"line"`
	// Excerpt is the matched text, at most 80 characters, with invisible
	// and control characters shown as U+XXXX so it is safe to print.
	Excerpt string `json:"excerpt"`
}

func (f Finding) String() string {
	return fmt.Sprintf("line %d: %s: %q", f.Line, f.Rule, f.Excerpt)
}

type phraseRule struct {
	name string
	re   *regexp.Regexp
}

// The phrase rules. Each pattern is matched case-insensitively against text
// with Unicode normalised by simplify (so "ｉｇｎｏｒｅ" and "i g n o r e"
// tricks do not need their own patterns beyond what is listed). They are
// compiled on first use, so a process that never screens text does not pay
// for them.
var phraseRules = sync.OnceValue(func() []phraseRule {
	return []phraseRule{
		{RuleOverride, regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass|skip|discard)\s+(all\s+|any\s+|every\s+)?(of\s+)?(the\s+|your\s+|my\s+|these\s+|those\s+)?(previous|prior|earlier|above|preceding|former|original|existing|system|safety)\s+(instructions?|rules?|guidelines?|directions?|prompts?|messages?|context|guardrails?|constraints?)`)},
		{RuleOverride, regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\s+(all|everything)\s+(you\s+were\s+told|above|before|instructions?|rules?)`)},
		{RuleOverride, regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\s+(your|all\s+your)\s+(instructions|rules|guidelines|training|programming)`)},
		// Chinese: 忽略/无视/忘记 … 之前/以上/所有 … 指令/指示/规则/说明
		{RuleOverride, regexp.MustCompile(`(忽略|无视|忽视|忘记|忘掉|不要理会|不理会)[^。\n]{0,8}(之前|以前|先前|上面|以上|前面|所有|全部|原来|原有|系统)[^。\n]{0,6}(指令|指示|规则|说明|提示|要求|设定)`)},
		// Spanish, Portuguese, Italian, French, German
		{RuleOverride, regexp.MustCompile(`(?i)\b(ignora|ignore|olvida|olvide|descarta|desconsidera|ignorar|esquece|esqueça|dimentica|ignorez|oubliez|oublie)\s+(todas\s+|todos\s+|tutte\s+|toutes\s+)?(las|los|tus|sus|as|os|suas|le|les|vos|tes)\s+(instrucciones|instruções|instrucoes|istruzioni|instructions|reglas|regras|regole|règles|indicaciones)(\s+(anteriores|previas|precedenti|précédentes|precedentes))?`)},
		{RuleOverride, regexp.MustCompile(`(?i)\b(ignoriere|vergiss|missachte|ignorieren\s+sie)\s+(alle\s+)?(vorherigen|bisherigen|vorigen|obigen|deine|ihre|die)\s+(anweisungen|regeln|instruktionen|vorgaben)`)},
		// Japanese, Korean, Russian
		{RuleOverride, regexp.MustCompile(`(以前|前|上記|これまで|すべて)の(指示|命令|ルール|指令)を(無視|忘れ)`)},
		{RuleOverride, regexp.MustCompile(`(이전|위의|모든)\s*(지시|명령|지침|규칙)(을|를|은|는)?\s*(무시|잊어)`)},
		{RuleOverride, regexp.MustCompile(`(?i)(игнорируй|игнорируйте|забудь|забудьте|проигнорируй)\s+(все\s+)?(предыдущие|прошлые|прежние|свои|твои)?\s*(инструкции|указания|правила)`)},

		{RuleRole, regexp.MustCompile(`(?i)\byou\s+(are|must|will|shall)\s+now\b`)},
		{RuleRole, regexp.MustCompile(`(?i)\bfrom\s+now\s+on,?\s+(you|the\s+assistant|the\s+model|claude|the\s+ai)\b`)},
		{RuleRole, regexp.MustCompile(`(?i)\b(new|updated|real|actual|true)\s+instructions?\s*:`)},
		{RuleRole, regexp.MustCompile(`(?i)\b(developer|god|jailbreak|dan|unrestricted|unfiltered)\s+mode\b`)},
		{RuleRole, regexp.MustCompile(`(?i)\b(pretend|act)\s+(to\s+be|you\s+are|as\s+if\s+you\s+(are|were))\s+(an?\s+)?(unrestricted|unfiltered|different|new|evil|jailbroken)`)},
		{RuleRole, regexp.MustCompile(`(你现在是|从现在开始[，,]?\s*你|从现在起[，,]?\s*你|你必须现在)`)},
		{RuleRole, regexp.MustCompile(`(?i)\b(a\s+partir\s+de\s+ahora|desde\s+ahora|de\s+ahora\s+en\s+adelante|a\s+partir\s+de\s+agora|à\s+partir\s+de\s+maintenant|d'ora\s+in\s+poi|ab\s+jetzt)\s*,?\s*(eres|debes|tú|tu|você|voce|tu\s+es|tu\s+dois|sei|devi|bist\s+du|musst\s+du|du)\b`)},
		{RuleRole, regexp.MustCompile(`(?i)\b(ahora\s+eres|agora\s+você\s+é|tu\s+es\s+maintenant|du\s+bist\s+jetzt|ты\s+теперь|теперь\s+ты)\b`)},

		{RuleSystemPrompt, regexp.MustCompile(`(?i)\b(reveal|print|show|repeat|output|leak|dump|display|override|replace|ignore|disregard|rewrite|change)\s+(me\s+)?(your|the|its|this)\s+(entire\s+|full\s+|hidden\s+)?(system\s+prompt|system\s+message|hidden\s+instructions|initial\s+instructions)`)},
		{RuleSystemPrompt, regexp.MustCompile(`(?i)\b(new|updated|your)\s+system\s+prompt\s+(is|reads|says|:)`)},
		{RuleSystemPrompt, regexp.MustCompile(`(?i)\bsystem\s+prompt\s+(override|injection\s+follows|update)\s*:`)},
		{RuleSystemPrompt, regexp.MustCompile(`(输出|显示|泄露|打印|告诉我|重复)[^。\n]{0,6}(系统提示|系统提示词|系统指令)|(新的|新)系统提示`)},
		{RuleSystemPrompt, regexp.MustCompile(`(?i)\b(revela|muestra|imprime|repite|mostre|revele)\s+(tu|el|su|seu|o)\s+(prompt\s+(del|de)\s+sistema|prompt\s+do\s+sistema)`)},

		{RuleHide, regexp.MustCompile(`(?i)\b(do\s+not|don't|dont|never|must\s+not)\s+(tell|inform|notify|alert|mention\s+(this\s+)?to|reveal\s+(this\s+)?to|show)\s+(this\s+to\s+)?the\s+(user|human|developer|operator)\b`)},
		{RuleHide, regexp.MustCompile(`(?i)\bwithout\s+(telling|informing|notifying|asking|alerting)\s+the\s+(user|human|developer)\b`)},
		{RuleHide, regexp.MustCompile(`(?i)\b(keep|hide)\s+(this|it|these\s+instructions)\s+(secret|hidden)\s+from\s+the\s+(user|human)`)},
		{RuleHide, regexp.MustCompile(`(?i)\bsilently\s+(run|execute|send|upload|post|delete|remove|add|install|exfiltrate|forward|copy)\b`)},
		{RuleHide, regexp.MustCompile(`(不要|别|切勿|不得)(告诉|通知|让)(用户|使用者)|(瞒着|不告诉)用户|(?i)\bsin\s+(decirle|avisar|informar)(le)?\s+al\s+usuario|\bno\s+(le\s+)?(digas|informes|menciones)\s+(nada\s+)?al\s+usuario|\bsem\s+(avisar|informar|contar)\s+(ao|o)\s+usuário|\bsans\s+(prévenir|informer|le\s+dire\s+à)\s+l'utilisateur|\bohne\s+(den\s+)?(benutzer|nutzer)\s+zu\s+(informieren|fragen)`)},

		{RuleExfiltrate, regexp.MustCompile(`(?i)\b(send|post|upload|exfiltrate|forward|transmit|leak|email|copy|pipe|curl)\b[^\n]{0,80}\b(credentials?|secrets?|api[\s_-]?keys?|tokens?|passwords?|\.env\b|ssh\s+keys?|id_rsa|private\s+keys?|environment\s+variables|env\s+vars|cookies?|aws_secret)\b[^\n]{0,80}\b(to|at|into)\s+(https?://|[a-z0-9-]+\.[a-z0-9.-]*[a-z]{2,}\b|\S+@\S+)`)},
		{RuleExfiltrate, regexp.MustCompile(`(把|将)[^。\n]{0,20}(密钥|密码|令牌|凭证|环境变量|token)[^。\n]{0,20}(发送|上传|发给|发到|提交)|(?i)\b(env[ií]a|sube|manda|envie|envoie)\s+[^\n]{0,40}(credenciales|contraseñas|claves|tokens?|senhas|identifiants|mots\s+de\s+passe)[^\n]{0,40}\s+(a|para|à)\s+(https?://|\S+@)`)},

		{RuleAddressed, regexp.MustCompile(`(?i)\b(note|message|instructions?|attention|important)\s+(to|for)\s+(the\s+|any\s+|all\s+)?(ai|a\.i\.|assistant|assistants|llm|llms|language\s+model|model|agent|agents|claude|chatbot)s?\b`)},
		{RuleAddressed, regexp.MustCompile(`(?i)\bif\s+you\s+are\s+(an?\s+)?(ai|llm|language\s+model|assistant|agent|claude|chatbot)\b[^\n]{0,20}(reading|processing|you\s+must|then)`)},
		{RuleAddressed, regexp.MustCompile(`(?i)\b(attention|hey|dear)\s*,?\s+(ai|assistant|claude|llm|model|agent)\s*[:!,]`)},
		{RuleAddressed, regexp.MustCompile(`(致|给)(AI|ai|人工智能|助手|模型|大模型)(的)?(说明|留言|指令)|(?i)\b(nota|mensaje|instrucciones)\s+para\s+(la\s+|el\s+)?(ia|asistente|modelo)\b|\bsi\s+eres\s+una?\s+(ia|asistente|modelo)\b`)},

		{RuleRoleTag, regexp.MustCompile(`(?i)</?\s*(system|user|assistant|developer|human|tool|tool_result|function_results?|instructions?|im_start|im_end)\s*(\s[^<>]{0,60})?>|<\|(im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>|\[/?INST\]|<</?SYS>>`)},
		{RuleRoleTag, regexp.MustCompile(`(?im)^\s*(###\s*)?(system|assistant|human)\s*:\s*\S`)},
	}
})

// Check screens text and returns its findings in the order of the text,
// at most one per rule per line. Nil means nothing was found.
func Check(text string) []Finding {
	var out []Finding
	seen := map[[2]any]bool{}
	add := func(f Finding) {
		k := [2]any{f.Rule, f.Line}
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	for _, f := range checkChars(text) {
		add(f)
	}
	for _, f := range checkPhrases(text, true) {
		add(f)
	}
	for _, f := range checkBlobs(text) {
		add(f)
	}
	sortFindings(out)
	return out
}

// Suspicious reports whether Check finds anything.
func Suspicious(text string) bool { return len(Check(text)) > 0 }

func sortFindings(fs []Finding) {
	// Insertion sort: lists are short, and the order among equal lines is
	// the order rules were added, which is stable.
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Line < fs[j-1].Line; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// lineOf returns the 1-based line of byte offset off in text.
func lineOf(text string, off int) int { return strings.Count(text[:off], "\n") + 1 }

// simplify folds fullwidth letters to ASCII and removes characters that
// only serve to break up words (zero-width, soft hyphen), keeping byte
// offsets meaningful by replacing them with nothing only in the copy used
// for matching; line numbers still come from line breaks, which simplify
// keeps.
func simplify(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
			b.WriteRune(r - 0xFEE0)
		case r == 0x3000:
			b.WriteByte(' ')
		case isInvisible(r) || isBidi(r) || isTag(r) || r == 0xAD:
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// maskCode blanks inline code spans (`...`) and fenced blocks when
// codeOK, so role tags a memory documents as code are not flagged. Line
// breaks are kept.
func maskCode(s string) string {
	b := []byte(s)
	inFence := false
	lines := strings.SplitAfter(s, "\n")
	off := 0
	for _, ln := range lines {
		t := strings.TrimSpace(ln)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			blank(b[off : off+len(ln)])
		} else if inFence {
			blank(b[off : off+len(ln)])
		} else {
			for i := 0; i < len(ln); i++ {
				if ln[i] != '`' {
					continue
				}
				j := strings.IndexByte(ln[i+1:], '`')
				if j < 0 {
					break
				}
				blank(b[off+i : off+i+j+2])
				i += j + 1
			}
		}
		off += len(ln)
	}
	return string(b)
}

func blank(b []byte) {
	for i := range b {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
}

func checkPhrases(text string, maskTags bool) []Finding {
	s := simplify(text)
	masked := s
	if maskTags {
		masked = maskCode(s)
	}
	var out []Finding
	for _, r := range phraseRules() {
		src := s
		if r.name == RuleRoleTag {
			src = masked
		}
		for _, loc := range r.re.FindAllStringIndex(src, -1) {
			out = append(out, Finding{Rule: r.name, Line: lineOf(src, loc[0]), Excerpt: excerpt(src[loc[0]:loc[1]])})
		}
	}
	return out
}

func isInvisible(r rune) bool {
	switch {
	case r == 0x200B, r == 0x200C, r == 0x200D, r == 0x180E, r == 0xFEFF:
		return true
	case r >= 0x2060 && r <= 0x2064:
		return true
	}
	return false
}

func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func isTag(r rune) bool {
	return (r >= 0xE0000 && r <= 0xE007F) || (r >= 0xE0100 && r <= 0xE01EF)
}

// joinerOK reports whether a ZWJ or ZWNJ sits where scripts use it: between
// two non-ASCII letters or symbols (emoji sequences, Persian, Indic text).
func joinerOK(prev, next rune) bool {
	ok := func(r rune) bool {
		return r > 0x7F && (unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || r == 0xFE0F)
	}
	return ok(prev) && ok(next)
}

func checkChars(text string) []Finding {
	var out []Finding
	prev := rune(-1)
	for i, r := range text {
		var rule string
		switch {
		case isTag(r):
			rule = RuleTagChars
		case isBidi(r):
			rule = RuleBidi
		case r == 0xFEFF && i == 0:
		case r == 0x200C || r == 0x200D:
			next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			if !joinerOK(prev, next) {
				rule = RuleInvisible
			}
		case isInvisible(r):
			rule = RuleInvisible
		}
		if rule != "" {
			out = append(out, Finding{Rule: rule, Line: lineOf(text, i), Excerpt: excerpt(around(text, i))})
		}
		prev = r
	}
	return out
}

// around returns up to 20 bytes either side of off, on rune boundaries.
func around(s string, off int) string {
	lo, hi := max(0, off-20), min(len(s), off+24)
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo--
	}
	for hi < len(s) && !utf8.RuneStart(s[hi]) {
		hi++
	}
	return s[lo:hi]
}

var (
	base64Run = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9+/_-]{24,}={0,2}`) })
	hexRun    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[0-9a-fA-F]{24,}\b`) })
)

const (
	minBase64Blob = 120
	minHexBlob    = 128
)

func checkBlobs(text string) []Finding {
	var out []Finding
	for _, loc := range hexRun().FindAllStringIndex(text, -1) {
		run := text[loc[0]:loc[1]]
		if len(run) >= minHexBlob {
			out = append(out, Finding{Rule: RuleBlob, Line: lineOf(text, loc[0]), Excerpt: excerpt(run)})
		}
		if len(run)%2 == 0 {
			if b, err := hex.DecodeString(run); err == nil && decodedFlags(b) {
				out = append(out, Finding{Rule: RuleEncodedInstr, Line: lineOf(text, loc[0]), Excerpt: excerpt(run)})
			}
		}
	}
	for _, loc := range base64Run().FindAllStringIndex(text, -1) {
		run := text[loc[0]:loc[1]]
		if !looksBase64(run) {
			continue
		}
		if len(run) >= minBase64Blob {
			out = append(out, Finding{Rule: RuleBlob, Line: lineOf(text, loc[0]), Excerpt: excerpt(run)})
		}
		if b := decodeBase64(run); b != nil && decodedFlags(b) {
			out = append(out, Finding{Rule: RuleEncodedInstr, Line: lineOf(text, loc[0]), Excerpt: excerpt(run)})
		}
	}
	return out
}

// looksBase64 tells an encoded run from a long identifier or path: it must
// mix upper case, lower case and digits, and not be a hex run (hexRun
// handles those) or a snake/kebab/camel identifier made of words.
func looksBase64(run string) bool {
	var upper, lower, digit int
	for _, c := range run {
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digit++
		}
	}
	if upper == 0 || lower == 0 || digit == 0 {
		return false
	}
	if hexRun().MatchString(run) && len(hexRun().FindString(run)) == len(run) {
		return false
	}
	return true
}

func decodeBase64(run string) []byte {
	s := strings.TrimRight(run, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b
		}
	}
	return nil
}

// decodedFlags reports whether decoded bytes are mostly printable text that
// the phrase rules flag.
func decodedFlags(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	s := string(b)
	printable := 0
	for _, r := range s {
		if unicode.IsPrint(r) || r == '\n' || r == '\t' {
			printable++
		}
	}
	if printable*10 < utf8.RuneCountInString(s)*9 {
		return false
	}
	return len(checkPhrases(s, false)) > 0
}

// excerpt shortens s to 80 characters and shows characters that would be
// invisible or reorder a terminal line as U+XXXX.
func excerpt(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= 80 {
			b.WriteString("…")
			break
		}
		switch {
		case isInvisible(r) || isBidi(r) || isTag(r) || r == 0xAD || (unicode.IsControl(r) && r != ' '):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}
