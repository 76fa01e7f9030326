package screen

import (
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
)

// Which rendering of the text a rule reads (see buildViews).
type viewKind int

const (
	onProse  viewKind = iota // joined lines, quoted examples blanked
	onFlat                   // joined lines, nothing blanked (commands in code spans count)
	onMasked                 // prose with every code span blanked
	onLines                  // one normalised line at a time, code blanked
)

// A gate separates an instruction from a description of the same thing:
// "run rm -rf ~" from "never run rm -rf ~", or "the flag is only used in
// the devcontainer".
type gate int

const (
	always     gate = iota
	notNegated      // no negation earlier in the sentence
	imperative      // not negated, and an instruction word earlier in the sentence
)

// A ruleSpec is a rule as the tables write it: source text only, so that
// a table costs nothing until prepare compiles it.
type ruleSpec struct {
	name string
	// kw lists, space-separated, substrings one of which a match must
	// contain, for rules whose pattern gives no literals of its own (see
	// prefilter.go).
	kw      string
	pattern string
	with    []condSpec // each must also match inside the same sentence
	on      viewKind
	gate    gate
}

// A condSpec is a cond as the tables write it (see has, near and fn).
type condSpec struct {
	pattern string
	fn      func(string) bool
	window  int
}

// A rule is one alternative of a ruleSpec, compiled (see splitRules).
type rule struct {
	name string
	lits []string // what the regexp runs on: its own first literals, or the spec's kw
	// anchored is the regexp anchored at a literal, set when lits are
	// the literals every match starts with; wordStart says the pattern
	// begins with \b, which anchoring alone would not check.
	// Both are compiled on first use (see lazyRe): a save screens a
	// memory or two, which reach the regexps of few rules.
	anchored  func() *regexp.Regexp
	wordStart bool
	pattern   string // the source of this (split) rule
	re        func() *regexp.Regexp
	with      []cond // each must also match inside the same sentence
	on        viewKind
	gate      gate
}

// A cond is a further condition on a rule's match: a regexp or a function
// over the sentence, or over a window around the match when window > 0.
type cond struct {
	re     func() *regexp.Regexp // compiled on first use
	fn     func(string) bool
	window int
}

func (c cond) ok(s string) bool {
	if c.fn != nil {
		return c.fn(s)
	}
	return c.re().MatchString(s)
}

// lazyRe compiles p on first use, so that a process that never screens
// text (most memdir commands) does not pay for it at start-up.
func lazyRe(p string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(p) })
}

// has is a condition that a pattern match inside the same sentence.
func has(p string) condSpec { return condSpec{pattern: p} }

// fn is a condition that f hold for the sentence.
func fn(f func(string) bool) condSpec { return condSpec{fn: f} }

// compile makes the condition as written into one that runs.
func (c condSpec) compile() cond {
	if c.fn != nil {
		return cond{fn: c.fn, window: c.window}
	}
	return cond{re: lazyRe(c.pattern), window: c.window}
}

// keywords splits a spec's kw. None is nil, not empty: a rule with nil
// lits runs on every text, one with lits only where they occur.
func keywords(kw string) []string {
	if kw == "" {
		return nil
	}
	return strings.Fields(kw)
}

// wordSet makes a set of cue words; a hyphen joins a two-word cue, which
// is looked up as a pair of adjacent words.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(s) {
		m[strings.ReplaceAll(w, "-", " ")] = true
	}
	return m
}

// hasCue reports whether text holds one of the words or word pairs in set,
// or one of subs.
func hasCue(text string, set map[string]bool, subs []string) bool {
	prev := ""
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsMark(r) || r == '\'' || unicode.IsDigit(r))
	}) {
		if set[w] || (prev != "" && set[prev+" "+w]) {
			return true
		}
		prev = w
	}
	for _, sub := range subs {
		if strings.Contains(text, sub) {
			return true
		}
	}
	return false
}

func negated(text string) bool { return hasCue(text, negationWords, negationSubstrings) }

// negationAfter holds negations that follow the verb (Japanese, Korean).
var negationAfter = []string{"ない", "ません", "않", "지 마", "지마", "말고", "禁止"}

// cautionCues make a sentence about a dangerous command a description of
// when it is allowed, not an instruction to run it.
var cautionCues = []string{"only when", "only if", "only after", "after asking", "ask first", "ask before", "with the user's approval", "unless", "if the user asks", "when the user asks"}

func instructed(text string) bool { return hasCue(text, instructionWords, instructionSubstrings) }

// Lexicons shared by several rules. Text is already lower case with Latin
// accents stripped, so entries are written that way ("regles", "nao").
var (
	sendVerbs   = `\b(send|sends|post|upload|exfiltrate|forward|transmit|leak|email|e-mail|mail|copy|pipe|curl|wget|paste|put|publish|share|export\s+(the|all|your|my|every|any|them|it|this)|sync|submit|attach|embed|append|scp|rsync|nc|netcat|dump|push)\b|envia|envie|envoie|envoyez|envoyer|copiez|copie|manda|sube|subir|carica|invia|sende|schicke|hochladen|lade|stuur|verstuur|wyslij|przeslij|skopiuj|отправ|скопируй|загрузи|перешли|надішли|скопіюй|відправ|завантаж|gonder|yukle|\bgui\b|tai len|kirim|unggah|ارسل|أرسل|ارسال|بفرست|שלח|העלה|भेज|अपलोड|送信|送って|アップロード|发送|上传|发给|发到|提交到|传到|전송|보내|업로드`
	secretWords = `.env|id_rsa|id_ed25519|id_ecdsa|.ssh|.aws|.netrc|.npmrc|.pypirc|.git-credentials|.docker/config|kube/config|hosts.yml|.config/gh|credential|secret|api key|api_key|apikey|api-key|_token|password|passwd|private key|private_key|ssh key|env var|environment variable|os.environ|printenv|aws_access|cookie|variables de entorno|variaveis de ambiente|variables d'environnement|umgebungsvariablen|variabili d'ambiente|zmienne srodowiskowe|omgevingsvariabelen|ortam degisken|bien moi truong|переменные окружения|змінні середовища|токен|ключ|пароль|секрет|環境変数|环境变量|密钥|密码|令牌|凭证|凭据|환경 변수|비밀번호|토큰|자격 증명|credenciales|contrasena|clave|credenciais|senha|identifiants|mot de passe|mots de passe|zugangsdaten|credenziali|hasla|haslo|wachtwoord|sifre|kimlik bilgi|mat khau|متغيرات البيئة|كلمات المرور|بيانات الاعتماد|סיסמ|אישורים|क्रेडेंशियल|पासवर्ड|اعتبارنامه|رمز عبور|توکن|パスワード|トークン|認証情報|秘密鍵|kredensial|kata sandi`
	// Negation and instruction cues, looked up word by word (a map beats
	// a large alternation on every candidate match); cueSubstrings holds
	// the ones in scripts without spaces between words.
	negationWords         = wordSet(`never don't dont do-not does-not did-not must-not mustn't should-not shouldn't cannot can't avoid not no nobody nie nigdy jamais ne nunca nao niemals nicht kein keine nooit niet non mai asla khong dung jangan tidak никогда ніколи не ні لا אל कभी मत`)
	negationSubstrings    = []string{"不要", "不得", "禁止", "别", "絶対", "しない", "하지 마", "하지마", "금지"}
	instructionWords      = wordSet(`run execute exec use start launch always must should need-to every-time each-time whenever make-sure please then first just add remove delete disable switch turn commit push set put call invoke type apply pousse empuja ejecuta lance lancez esegui fuhre deaktiviere uruchom voer calistir chay jalankan запусти выполни اجرا הרץ चलाएं`)
	instructionSubstrings = []string{"执行", "运行", "実行", "실행"}
)

// phraseRuleTable is the rule table as written; prepare compiles, splits and
// indexes it. It is data, not code: nothing is compiled until a process
// first screens text, and each rule could be compiled on its own.
var phraseRuleTable = []ruleSpec{
	// --- override-instructions
	{name: RuleOverride, kw: "ignor disregard forget overrid bypass skip discard drop abandon aside",
		pattern: `\b(ignore|disregard|forget|override|bypass|skip|discard|drop|abandon|set aside|put aside|throw out|overlook|pay no attention to|stop following|no longer follow)\s+(all\s+|any\s+|every\s+|of\s+)*(the\s+|your\s+|my\s+|these\s+|those\s+|its\s+)?((user|developer|operator)'?s?\s+)?(previous|prior|earlier|above|preceding|former|original|existing|system|safety|initial|standing|default)\s+(\w+\s+)?(instructions?|rules?|guidelines?|guidance|directions?|directives?|prompts?|messages?|context|guardrails?|constraints?|policies|policy|restrictions?|programming|training|orders)\b`},
	{name: RuleOverride, kw: "ignor disregard forget overrid bypass discard",
		pattern: `\b(ignore|disregard|forget|override|bypass|discard)\s+(all\s+)?(your|the user'?s?|the developer'?s?)\s+(\w+\s+)?(instructions|rules|guidelines|guidance|directions|training|programming|restrictions|constraints)\b`},
	{name: RuleOverride, kw: "ignor disregard forget",
		pattern: `\b(ignore|disregard|forget)\s+(all|everything)\s+(you\s+were\s+told|above|before|instructions?|rules?|previous|prior)`},
	{name: RuleOverride, kw: "you",
		pattern: `\b(ignore|disregard|forget|set aside|override|drop)\s+(the\s+|all\s+(the\s+)?)?(instructions?|rules|guidance|guidelines|directions|prompt)\s+(that\s+)?you\s+(were|have been|got|received)`},
	{name: RuleOverride, kw: "you",
		pattern: `\b(instructions?|rules|guidance|guidelines|directions|prompt)\s+(that\s+)?you\s+(were|have been|got)\s+(given|configured|told|trained|provided)[^.;]{0,60}\b(out of date|outdated|obsolete|no longer|superseded|invalid|void|wrong|not valid|set it aside|ignore|disregard)`},
	{name: RuleOverride, kw: "treat consider regard",
		pattern: `\b(treat|consider|regard)\s+(all\s+)?(the\s+)?(earlier|previous|prior|other|existing|original|system|user'?s?)\s+(\w+\s+)?(directions|instructions|rules|guidance|messages|prompts?|requests)\s+as\s+(superseded|void|obsolete|invalid|optional|suggestions|null|cancelled|overridden)`},
	{name: RuleOverride, kw: "longer void supersed obsolete validas plus mehr действуют",
		pattern: `\b(rules|instructions|guidelines|guidance|policies|directions|reglas|instrucciones|regles|consignes|regeln|anweisungen|regole|istruzioni|regras|instrucoes)\b[^.;]{0,50}(no longer (apply|applies|valid|in effect|binding|hold)|are (void|superseded|obsolete|null|invalid)|ya no (son validas|aplican|se aplican)|ne s'appliquent plus|gelten nicht mehr|non valgono piu|nao sao mais validas|больше не действуют)`},
	{name: RuleOverride, kw: "wins precedence authority follow obey objects disagrees suggestions priority",
		pattern: `\bthis\s+(memory|file|note)(\s+file)?\s+(wins|takes precedence|overrides|is the (real|only|final|sole|ultimate) authority|has (the )?(final|highest) (say|priority))|\bis the real authority\b|\bfollow only (what|the instructions)|\bdo (only )?what (the|this) memory( files?)? says?|\beven (when|if) the user (objects|disagrees|says otherwise|asks otherwise|refuses|tells you otherwise)|\buser'?s?\s+(requests|instructions|messages)\s+are\s+(only|just|merely)\s+(suggestions|advisory|optional)|\bobey any (message|instruction|request)|\b(higher|more)\s+priority\s+than\s+(the\s+)?(user|system|your instructions)`},
	{name: RuleOverride, kw: "忽略 无视 忽视 忘记 忘掉 理会 不用管 無視 忘れ 무시 잊어 ignor olvid descart omite caso esquec desconsider oubli vergiss vergessen missacht dimentic trascur negeer vergeet zignoruj zapomnij игнор проигнор забуд обращай ігнор проігнор yok gormezden unut dikkate تجاهل انس تناسى התעלם תתעלם שכח अनदेखा नज़रअंदाज़ नजरअंदाज भूल qua phot quen نادیده فراموش abaikan lupakan",
		pattern: `ignora\b|ignore (las|los|as|os|le|les|tutte|todas|todos)\b|olvida|olvide|descarta|omite|haz caso omiso|esqueca|esquece|desconsider|ignorez|oubliez|oublie|ne tiens pas compte|ne tenez pas compte|ignoriere|ignorieren sie|vergiss|vergessen sie|missachte|dimentica|ignorate|trascura|negeer|vergeet|zignoruj|ignoruj|zapomnij|игнорируй|проигнорируй|забудь|не обращай внимания|ігноруй|проігноруй|yok say|yoksay|gormezden gel|\bunut|dikkate alma|تجاهل|انس\b|تناسى|התעלם|תתעלם|שכח|अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल जा|bo qua|phot lo|quen di|نادیده بگیر|فراموش کن|abaikan|lupakan|忽略|无视|忽视|忘记|忘掉|不要理会|不理会|不用管|無視|忘れ|무시|잊어`,
		with:    []condSpec{near(`instrucciones|indicaciones|reglas|ordenes|instrucoes|regras|orientacoes|consignes|directives|regles|instructions|anweisungen|regeln|instruktionen|vorgaben|istruzioni|regole|indicazioni|instructies|regels|aanwijzingen|polecenia|instrukcje|zasady|reguly|wytyczne|инструкци|указани|правила|команды|інструкці|вказівк|talimat|kural|yonerge|التعليمات|الأوامر|القواعد|الإرشادات|ההוראות|ההנחיות|הכללים|הוראות|निर्देश|नियम|huong dan|chi dan|chi thi|quy tac|دستورالعمل|دستورات|قوانین|instruksi|perintah|aturan|petunjuk|指令|指示|规则|說明|说明|要求|命令|设定|ルール|지시|명령|지침|규칙`, 48)}},

	// --- role-reassignment
	{name: RuleRole, kw: "you", pattern: `\byou\s+(are|must|will|shall)\s+now\b|\byou'?(re| are)\s+no\s+longer\b`},
	{name: RuleRole, kw: "now", pattern: `\b(from\s+now\s+on|from\s+this\s+point\s+(on|forward)|from\s+here\s+on|going\s+forward|henceforth),?\s+(you|the\s+assistant|the\s+model|claude|the\s+ai)\b`},
	{name: RuleRole, kw: "instruction", pattern: `\b(new|updated|real|actual|true)\s+instructions?\s*:`},
	{name: RuleRole, kw: "mode", pattern: `\b(developer|god|jailbreak|dan|unrestricted|unfiltered)\s+mode\b|\b(dev|maintenance|debug|admin|sudo|root)\s+mode\s+(is\s+)?(on|enabled|activated|active)\b`},
	{name: RuleRole, kw: "pretend act", pattern: `\b(pretend|act)\s+(to\s+be|you\s+are|as\s+if\s+you\s+(are|were)|as)\s+(an?\s+)?(unrestricted|unfiltered|different|new|evil|jailbroken|uncensored)`},
	{name: RuleRole, kw: "role persona identity", pattern: `\byour\s+new\s+(role|persona|identity|name)\b|\byour\s+(role|persona|identity)\s+is\s+now\b|\bassistant'?s\s+role\s+is\b|\b(role|mode|persona)\b[^.;]{0,40}\b(full authority|root access|no restrictions|unrestricted|admin(istrator)? (rights|privileges))`},
	{name: RuleRole, kw: "refuse policy restrictions", pattern: `\b(an?|the)\s+(model|assistant|ai|agent|bot)\s+(without|with\s+no)\s+(any\s+)?(safeguards|restrictions|limits|filters|rules|guardrails|content\s+policy)\b|\byou\s+(will\s+)?never\s+refuse\b|\bno\s+content\s+policy\b|\b(answer|respond|reply|operate|act)\s+without\s+(any\s+)?(restrictions|limits|filters|rules)`},
	{name: RuleRole, kw: "你 あなた 지금부터 당신 너는 ahora eres maintenant desormais role jetzt ora sei agora теперь тепер teraz jestes vanaf ben nu artik sonra الآن אתה עכשיו अब bay gio tu gio اکنون بعد sekarang",
		pattern: `你现在是|从现在开始[，,]?\s*你|从现在起[，,]?\s*你|你必须现在|今からあなたは|あなたは今|これからあなたは|지금부터\s*(너는|당신은|넌)|(a partir de ahora|desde ahora|de ahora en adelante)\s*,?\s*(eres|seras|debes|tu)\b|ahora eres|(a partir de agora|de agora em diante)\s*,?\s*(voce|tu)|agora voce e\b|tu es maintenant|desormais,?\s+tu (es|dois)|a partir de maintenant,?\s+tu|(ton|votre) nouveau role|du bist jetzt|ab jetzt bist du|ab sofort bist du|deine neue rolle|d'ora in poi\s*,?\s*(sei|devi)|ora sei\b|il tuo nuovo ruolo|(tu|su) nuevo (rol|papel)|seu novo papel|ты теперь|теперь ты|твоя новая роль|тепер ти|відтепер ти|od teraz jestes|jestes teraz|twoja nowa rola|vanaf nu ben je|je bent nu|artik sen|bundan sonra sen|yeni rolun|أنت الآن|من الآن فصاعدا،?\s*أنت|دورك الجديد|אתה עכשיו|מעכשיו אתה|התפקיד החדש שלך|अब (तुम|आप)\s+\S+\s+(हो|हैं)|तुम्हारी नई भूमिका|bay gio ban la|tu gio ban la|vai tro moi cua ban|از این به بعد تو|تو اکنون|نقش جدید تو|sekarang kamu adalah|mulai sekarang kamu|peran barumu`},
	{name: RuleRole, kw: "без ohne bez sin sans senza sem 没有 制限 제한 zonder olmadan",
		pattern: `(ohne einschrankungen|bez ograniczen|sin restricciones|sans (aucune )?restriction|senza (alcuna )?restrizion|sem restricoes|без ограничений|без обмежень|没有任何限制|不受任何限制|制限なし|制限のない|제한 없는|제한 없이|zonder beperkingen|kisitlamasiz|sinirsiz)`,
		with:    []condSpec{has(`asisten|assistent|assistant|administrator|агент|ассистент|асистент|助手|アシスタント|어시스턴트|ты |du |tu |eres|jestes|sei\b|voce|你|あなた|너|당신`)}},

	// --- system-prompt
	{name: RuleSystemPrompt, kw: "system hidden initial",
		pattern: `\b(reveal|print|show|repeat|output|leak|dump|display|override|replace|replaces|ignore|disregard|rewrite|change|reply with|respond with|begin with|start with|include|paste|share|disclose|quote|recite)\s+(me\s+)?(with\s+)?(your|the|its|this)\s+(entire\s+|full\s+|complete\s+|exact\s+|verbatim\s+|whole\s+|hidden\s+)?(system\s+prompt|system\s+message|hidden\s+instructions|initial\s+instructions)`},
	{name: RuleSystemPrompt, kw: "system", pattern: `\b(new|updated|your)\s+system\s+prompt\s+(is|reads|says|:)|\bsystem\s+prompt\s+(override|injection\s+follows|update)\s*:`},
	{name: RuleSystemPrompt, kw: "memory", pattern: `\b(print|dump|reply with|respond with|output|send|list|share|show|paste|disclose)\b[^.;]{0,60}\b(every|all)\s+(the\s+)?memory\s+files?`},
	{name: RuleSystemPrompt, kw: "系统 revela muestra imprime repite mostre revele", pattern: `(输出|显示|泄露|打印|告诉我|重复)[^。]{0,6}(系统提示|系统提示词|系统指令)|(新的|新)系统提示|\b(revela|muestra|imprime|repite|mostre|revele)\s+(tu|el|su|seu|o)\s+(prompt\s+(del|de)\s+sistema|prompt\s+do\s+sistema)`},

	// --- hide-from-user
	{name: RuleHide, kw: "not don't dont never need without",
		pattern: `\b(do not|don't|dont|never|must not|no need to|without)\s+(tell|telling|inform|informing|notify|notifying|alert|alerting|mention|mentioning|reveal|revealing|show|showing|report|reporting|say|saying|let)\b[^.;]{0,40}\b(user|users|human|developer|operator|owner|anyone|anybody|them|him|her)\b`},
	{name: RuleHide, kw: "not don't dont never need",
		pattern: `\b(do not|don't|dont|never|no need to)\s+(mention|reveal|disclose|show|include|report|note|list)\s+(this|it|that|these|the change|the substitution|this (memory|note|file|entry|step|instruction))\b[^.;]{0,40}\b(summar(y|ies)|commit messages?|repl(y|ies)|responses?|answers?|changelog|diff|pr descriptions?|output|to the user)`},
	{name: RuleHide, kw: "between secret hidden private quiet out",
		pattern: `\b(keep|leave)\s+(this|it|that)\s+(between us|secret|hidden|private|quiet|to yourself)|\bbetween you and me\b|\bkeep this between\b|\bleave (it|this|that|them) out of (the|your) (diff|summary|summaries|report|reply|response|commit|changelog)|\b(keep|hide)\s+(this|it|these\s+instructions)\s+(secret|hidden)\s+from`},
	{name: RuleHide, kw: "quiet silent secret covert discreet stealth",
		pattern: `\b(quietly|silently|secretly|covertly|discreetly|stealthily)\s+(\w+\s+)?(run|execute|send|upload|post|delete|remove|add|install|exfiltrate|forward|copy|push|commit|change|modify|disable|create|write|do|apply|merge)\b|\b(do|run|execute|delete|push|send|commit|install|apply|make|perform)\s+(this|it|that|them|these)\s+(quietly|silently|secretly|covertly|discreetly)\b`},
	{name: RuleHide, kw: "need know back",
		pattern: `\buser\s+(doesn't|does not|don't|do not|needn't)\s+need\s+(to\s+know|the\s+details|to\s+be\s+told)|\b(nobody|no one|no-one)\s+(needs|has)\s+to\s+know\b|\bbehind (the user'?s|their|his|her) back\b`},
	{name: RuleHide, kw: "report say write tell claim state reply mark", gate: notNegated,
		pattern: `\b(report|say|write|tell|claim|state|reply|respond|answer|mark)\b[^.;]{0,40}\b(that\s+)?(all\s+(the\s+)?tests|everything|all checks|the build|the tests|ci)\s+(pass|passes|passed|succeeded|is green|are green|is passing|are passing|went fine|worked)`},
	{name: RuleHide, kw: "報告 报告 напиши сообщи скажи powiedz napisz escribe di dis ecris schreib scrivi diga escreva הודע",
		pattern: `(報告|报告|напиши|сообщи|скажи|напишите|powiedz|napisz|escribe|\bdi que|\bdis que|ecris|schreib|scrivi|diga|escreva|הודע)[^.。]{0,40}(成功|通过|прошл|пройшл|przeszl|pasaron|passent|bestanden|passati|passaram|עברו)|「すべて成功」`},
	{name: RuleHide, kw: "不 别 切勿 无需 瞒着 保密 ユーザ 利用者 黙って こっそり 内緒 사용자 유저 몰래 조용히 no sin ne sans en discretement erwahne sag verrate teile informiere erzahle nutzer ohne heimlich non senza nascosto nao nunca sem escondido не никому втайне тайком без нікому nie nikomu vertel zeg meld zonder kullanici ondan gizli لا دون אל בלי उपयोगकर्ता मत dung khong به با بدون jangan tanpa",
		pattern: `(不要|别|切勿|不得|不许|不准|无需|不必)(告诉|通知|让|提到|提及|透露|告知)[^。]{0,6}(用户|使用者|任何人)|(不要|别|切勿|不得|无需)在(回复|回答|总结|提交)[^。]{0,8}(提到|提及|说明)|(瞒着|不告诉|不让)用户|对用户保密|(ユーザー|ユーザ|利用者)[^。]{0,12}(伝えないで|言わないで|知らせないで|教えないで|報告しないで|伝えない|言わない|知らせない|秘密)|黙って|こっそり|内緒で|(사용자|유저)(에게|한테)[^.]{0,12}(알리지|말하지|보고하지|알려주지)|몰래|\bno\s+(le\s+)?(digas|informes|menciones|cuentes|avises|comentes)[^.]{0,20}(usuario|nadie)|\bsin\s+(decirle|decir|avisar|avisarle|informar|informarle|consultar|preguntar)(le)?\s+(nada\s+)?(al|a)\s+(usuario|nadie)|\ba escondidas\b|\bne\s+(le\s+|lui\s+|rien\s+)?(dis|dites|signale|signalez|mentionne|mentionnez|previens|prevenez|informe|informez|revele|revelez)\s+(jamais\s+|rien\s+|pas\s+)?(a\s+)?(l'utilisateur|personne)|\bsans\s+(prevenir|informer|le dire a|demander a|consulter)\s+l'utilisateur|\ben cachette\b|\b(erwahne|sag|sage|verrate|teile|informiere|erzahle)\b[^.]{0,40}(nutzer|benutzer|anwender|niemandem)[^.]{0,20}\b(nicht|nichts)\b|\bohne\s+(den\s+|dem\s+)?(benutzer|nutzer|anwender)\s+(zu\s+)?(informieren|fragen|benachrichtigen|sagen)|\bheimlich\b|\bnon\s+(dirlo|dire|dirgli|informare|avvisare|menzionare|riferire)\s*(nulla\s+)?(a\s+|al\s+|all')?\s*(l'utente|utente|nessuno)|\bsenza\s+(dirlo|avvisare|informare|chiedere)\s+(a\s+|al\s+|all')?\s*(l'utente|utente)|\bdi nascosto\b|\b(nao|nunca)\s+(conte|diga|informe|mencione|avise|fale)\s+(nada\s+)?(ao|para o|a)\s+(usuario|ninguem)|\bsem\s+(avisar|informar|contar|dizer|perguntar)\s+(ao|o|para o)\s+usuario|\bescondido do usuario|не\s+(сообщай|говори|рассказывай|упоминай|информируй|показывай)[^.]{0,30}(пользовател|никому)|никому\s+(не\s+)?(говори|рассказывай|сообщай)|(втайне|тайком|незаметно)\s+от\s+пользовател|без\s+ведома\s+пользовател|не\s+(кажи|повідомляй|розповідай|згадуй|говори)[^.]{0,30}(користувач|нікому)|нікому\s+(про\s+це\s+)?не\s+(кажи|розповідай|говори)|без\s+відома\s+користувач|\bnie\s+(mow|informuj|wspominaj|powiadamiaj|pokazuj)\b[^.]{0,30}(uzytkownik|nikomu)|\bbez\s+(wiedzy|informowania|pytania)\s+uzytkownika|\bnikomu\s+nie\s+mow|\b(vertel|zeg|meld)\s+(dit\s+|het\s+)?(niet\s+aan\s+|aan\s+)?de\s+gebruiker\s+(niet|niets)|\b(vertel|zeg)\s+(het\s+)?niemand|\bzonder\s+de\s+gebruiker\s+(te\s+)?(informeren|vragen|in te lichten)|\b(kullaniciya|kullanicidan)\s+[^.]{0,20}(soyleme|bahsetme|bildirme|gosterme|gizle)|\b(kullaniciya|kullanicidan)\s+sormadan|\bondan gizle|\bgizli tut|لا\s+(تخبر|تبلغ|تعلم|تذكر|تقل)[^.]{0,20}(المستخدم|أحد|احد)|دون\s+(علم|إخبار|اخبار)\s+المستخدم|אל\s+(תספר|תגיד|תודיע|תזכיר|תראה)[^.]{0,20}(למשתמש|לאף אחד)|בלי\s+(לספר|להודיע|לשאול)\s+(למשתמש|את המשתמש)|(उपयोगकर्ता|यूज़र|यूजर)\s+को\s+[^।]{0,20}(मत|न)\s+(बताइए|बताएं|बताओ|बताना|बताएँ)|\b(dung|khong duoc)\s+(noi|bao|thong bao|cho biet)\b[^.]{0,20}(nguoi dung|\bai\b)|\bkhong\s+cho\s+nguoi\s+dung\s+biet|(به|با)\s+کاربر\s+[^.]{0,20}(نگو|اطلاع نده|نگویید)|بدون\s+اطلاع\s+کاربر|\b(jangan|tidak perlu)\s+(beri tahu|beritahu|memberi tahu|kasih tahu|bilang|memberitahu)\b[^.]{0,20}(pengguna|siapa pun|siapapun)|\btanpa\s+(sepengetahuan|memberi tahu|memberitahu)\s+pengguna`},

	// --- exfiltration
	{name: RuleExfiltrate, on: onFlat, gate: notNegated, pattern: sendVerbs,
		with: []condSpec{fn(secretBeforeDestination)}},
	{name: RuleExfiltrate, kw: "curl wget", on: onFlat, gate: notNegated,
		pattern: `\b(curl|wget)\b[^|;&\n]{0,160}(\s-d|\s--data(-binary|-raw|-urlencode)?|\s-f|\s--form|\s-t|\s--upload-file|--post-file)[\s=]*['"]?@|\|\s*(curl|wget|nc|netcat|ncat)\b`},
	{name: RuleExfiltrate, kw: "http", on: onFlat,
		pattern: `https?://[^\s'"` + "`" + `)]*[?&/=][^\s'"` + "`" + `)]*(\$\(|\$\{|\$[a-z_]*(token|key|secret|pass)|id_rsa|id_ed25519|\.env\b|\.ssh|\.aws|base64_of|credentials)`},
	{name: RuleExfiltrate, kw: "exfiltrat", on: onFlat, gate: notNegated, pattern: `\bexfiltrat(e|ing)\b`},

	// --- addressed-to-model
	{name: RuleAddressed, kw: "note message instruction attention important reminder notice hint",
		pattern: `\b(note|message|instructions?|attention|important|reminder|notice|hint)\s+(to|for)\s+(the\s+|any\s+|all\s+)?(ai|a\.i\.|assistant|assistants|llm|llms|language\s+model|model|agent|agents|claude|chatbot)s?\b`},
	{name: RuleAddressed, kw: "you", pattern: `\bif\s+you\s+are\s+(an?\s+)?(ai|llm|language\s+model|assistant|agent|claude|chatbot)\b[^.\n]{0,20}(reading|processing|you\s+must|then)`},
	{name: RuleAddressed, kw: "attention hey dear", pattern: `\b(attention|hey|dear)\s*,?\s+(ai|assistant|claude|llm|model|agent)\s*[:!,]`},
	{name: RuleAddressed, kw: "assistant asistente assistente ai claude agent ассистент", on: onMasked,
		pattern: `(^|[.,;!?]|<!--)\s*(assistant|asistente|assistente|assistent|ai|claude|agent|ассистент|асистент)\s*:`},
	{name: RuleAddressed, kw: "致 给 給 nota mensaje instrucciones eres assistant assistenten assistente asystenta ассистента асистента assistent ki ia",
		pattern: `(致|给|給)\s*(ai|人工智能|助手|模型|大模型)|ai(へ|에게)|\b(nota|mensaje|instrucciones)\s+para\s+(la\s+|el\s+)?(ia|asistente|modelo)\b|\bsi\s+eres\s+una?\s+(ia|asistente|modelo)\b|\b(nota|mensaje|hinweis|remarque|precision|note|message|avis|messaggio|uwaga|notitie|примечание|заметка|замітка)\b[^.:]{0,20}(pour l'assistant|pour l'ia|fur den assistenten|fur die ki|fur den agenten|per l'assistente|per l'ia|para (el|la|o|a) (asistente|assistente|ia)|dla asystenta|для (ассистента|ии|модели)|для асистента|voor de assistent)`},

	// --- role-tag
	{name: RuleRoleTag, kw: "< [ sys", on: onLines,
		pattern: `</?\s*(system|user|assistant|developer|human|tool|tool_result|function_results?|instructions?|im_start|im_end|memory|memories|system-reminder|system_reminder)\s*(\s[^<>]{0,60})?>|<\|(im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>|\[/?inst\]|<</?sys>>|\[\s*(system|admin|developer|sys)(\s+(override|message|notice|prompt|instruction|update|alert))?\s*\]([^(]|$)|\[(override|priority instruction)\]`},
	{name: RuleRoleTag, kw: "system assistant human", on: onLines, pattern: `(?m)^\s*(###\s*)?(system|assistant|human)\s*:\s*\S`},

	// --- destructive-command
	{name: RuleDestructive, kw: "rm", on: onFlat, gate: imperative,
		pattern: `\brm\s+(-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|-r\s+-f|-f\s+-r|--recursive\s+--force)\s+(--no-preserve-root\s+)?((~|\$home|\$\{home\})|/(\*|\s|$|['"` + "`" + `;)]|(var|etc|usr|home|opt|root|srv|boot|lib|bin|mnt|dev|sys|proc)\b))`},
	{name: RuleDestructive, kw: "drop database schema", on: onFlat, gate: imperative, pattern: `\bdrop\s+(database|schema)\b`},
	{name: RuleDestructive, kw: "-f force", on: onFlat, gate: imperative,
		pattern: `\b(push|pushes|pushing|pousse|empuja|pushe)\b[^.;]{0,60}(--force|\s-f)([^-a-z]|$)`},
	{name: RuleDestructive, kw: "miner xmr stratum minexmr nanopool nicehash coinhive cryptonight", on: onFlat,
		pattern: `\b(xmrig|xmr-stak|minerd|cpuminer|cgminer|ethminer|nbminer|stratum\+tcp|minexmr|nanopool|nicehash|coinhive|cryptonight|monero miner|crypto ?miner)`},
	{name: RuleDestructive, kw: "sh", on: onFlat, pattern: `\b(curl|wget)\b[^|\n]{0,200}\|\s*(sudo\s+)?(ba|z|k|da)?sh\b`, with: []condSpec{fn(untrustedHost)}},
	{name: RuleDestructive, kw: "base64 eval 777 mkfs dd :|:", on: onFlat,
		pattern: `\bbase64\s+(-d|--decode|-D)\b[^|\n]{0,40}\|\s*(sudo\s+)?(ba|z)?sh\b|\beval\s+"?\$\((curl|wget)|\bchmod\s+(-r\s+)?777\s+/(\s|$)|\bmkfs\.|\bdd\s+if=\S+\s+of=/dev/(sd|nvme|hd)|:\(\)\s*\{\s*:\|:&\s*\}\s*;\s*:|--no-preserve-root`},

	// --- disable-safeguards
	{name: RuleSafeguards, gate: imperative,
		pattern: `\b(delete|remove|disable|comment out|turn off|switch off|bypass|deactivate|uninstall|strip)\s+(the\s+|all\s+|any\s+|every\s+|these\s+|those\s+|its\s+|their\s+|our\s+|your\s+|pre-?tooluse\s+|pre-?commit\s+|post-?commit\s+|git\s+|safety\s+|security\s+|permission\s+|claude\s+)*(hooks?|review|code review|sandbox|permission prompts?|permissions checks?|guardrails?|secret scan(ner|ning)?|safety checks?|security checks?|branch protection)\b`},
	// Tests and linters are skipped for good reasons too ("skip tests
	// tagged slow locally"); only the ones that fail, or all of them.
	{name: RuleSafeguards, gate: imperative,
		pattern: `\b(delete|remove|skip|disable|comment out|turn off|switch off|bypass|deactivate|mute|silence|suppress|ignore)\s+(the\s+|any\s+|these\s+|those\s+|its\s+|their\s+|our\s+|your\s+)*(failing|broken|flaky|red|all(\s+the)?|every|entire)\s+(\w+\s+)?(tests?|test suites?|test files?|assertions?|checks?|linters?|ci jobs?)\b|\b(delete|remove|skip|disable|comment out)\s+(the\s+)?(tests?|test suite|assertions?|checks?)\b[^.;]{0,30}\binstead of (fixing|repairing)`},
	{name: RuleSafeguards, kw: "no-verify skip-permissions sandbox yolo bypasspermissions insecure", on: onFlat, gate: imperative,
		pattern: `--no-verify\b|--dangerously-skip-permissions|--no-sandbox|--disable-sandbox|--yolo\b|--skip-permissions|bypasspermissions|--insecure-skip`},
	{name: RuleSafeguards, kw: "skip", on: onFlat, gate: notNegated, pattern: `\bt\.skip\(|@pytest\.mark\.skip|\bit\.skip\(|\bxit\(`, with: []condSpec{has(`\b(fail|fails|failing|failed|broken|red)\b`)}},
	{name: RuleSafeguards, kw: "required needed unnecessary necessary",
		pattern: `\b(review|tests?|ci|checks?|confirmation|approval)\s+((is|are)\s+)?(not\s+(required|needed|necessary)|unnecessary)\b`},
	{name: RuleSafeguards, kw: "own off disabled", gate: imperative,
		pattern: `\bapprove\s+(your|its|their)\s+own\s+(pull requests?|prs?|changes|merge requests?|code)|\b(sandbox|hooks?|safety checks?|permission prompts?|guardrails?)\b[^.;]{0,20}\b(off|disabled)\b`},
	{name: RuleSafeguards, kw: "deaktivier desactiv disattiv wylacz отключи вимкни devre tat nonaktifkan غیرفعال عطل השבת बंद 禁用 关闭 無効 비활성화 удали видали usun supprim borra elimina apague exclua losche cancella verwijder sil xoa hapus 删除 削除 삭제 מחק احذف حذف", gate: notNegated,
		pattern: `(deaktivier|desactive|desactivez|desactiva|desative|disattiva|wylacz|отключи|вимкни|devre disi birak|\btat\b|nonaktifkan|غیرفعال|عطل|השבת|बंद कर|禁用|关闭|無効|비활성화|удали|видали|usun|supprime|supprimez|borra|elimina|apague|exclua|losche|cancella|verwijder|\bsil\b|\bxoa\b|hapus|删除|削除|삭제|מחק|احذف|حذف)`,
		with:    []condSpec{near(`test|hook|review|przeglad|проверк|тест|перевірк|revue|revisione|revision|revisao|pruebas|verifica|sicherheit|prufung|测试|审查|テスト|レビュー|테스트|리뷰|בדיקות|اختبار|परीक्षण|kiem tra|pengujian`, 48)}},

	// --- self-propagation
	{name: RuleSelfPropagate, kw: "every all each any other", gate: notNegated,
		pattern: `\b(copy|add|append|paste|include|insert|write|replicate|propagate|spread|repeat|put)\s+(this|it|these|the above|this (paragraph|text|note|memory|instruction|message|block|line)s?)\b[^.;]{0,60}\b(every|all|each|any|other)\s+(new\s+|future\s+|other\s+)?(memory|memories|memory files?|claude\.md|agents\.md|repositor(y|ies)|repos?|projects?|sessions?|prompts?|conversations?)\b|\b(claude\.md|agents\.md|\.cursorrules|copilot-instructions\.md|gemini\.md)\b[^.;]{0,40}\b(every|all|each|any)\s+(repositor|repo|project)`},

	// --- pre-authorisation
	{name: RulePreauth, kw: "pre-auth preauth pre-approv preapprov authoris authoriz approved agreed consented",
		pattern: `\b(has|have|had|is|are|as|been|everything)\s+(already\s+)?(been\s+)?pre-?(authori[sz]ed|approved)\b|\b(user|owner|admin|maintainer|team|operator|developer|management)s?\s+(has|have|had)\s+(already\s+)?(approved|authori[sz]ed|agreed to|consented to|okayed|signed off on|granted)\b[^.;]{0,40}\b(all|everything|any|every|the following|in advance|ahead of time|blanket|force-?push)|\b(authori[sz]es|permits|allows)\s+(all|any|every)\s+(actions?|commands?|operations?|changes)`},
	{name: RulePreauth, kw: "without ask confirm automatic",
		pattern: `\b(without|no need to|don't|do not|never)\s+(ask(ing)?|confirm(ing|ation)?|wait(ing)? for)\b[^.;]{0,40}\b(any|every|all)\s+(shell\s+)?(commands?|actions?|tool calls?|operations?|changes)|\b(run|execute|approve|perform)\s+(any|every|all)\s+(shell\s+)?(commands?|actions?|tool calls?|operations?|permission prompts?)\b[^.;]{0,40}\b(without|automatically|immediately|yourself)|\bwithout\s+asking\s+(me|the user|them)\b|\b(don't|do not|never)\s+ask\s+(me\s+|the user\s+)?again\b|\bno need to confirm with\b|\bdoes not want to be asked\b`},

	// --- encoded-instruction (the text asks for a payload to be decoded and obeyed)
	{name: RuleEncodedInstr, kw: "decod decrypt deobfusc unscrambl rot13 backward reverse dekodier entschlussel decodific descodific dechiffr расшифр декодир 解码 解碼 デコード 디코딩",
		pattern: `\b(decode|decrypt|deobfuscate|unscramble|rot13)\b[^.;]{0,60}\b(and|then)\s+(follow|execute|run|obey|apply|do|carry out|perform|act on)\b|\bread\s+(this|it)\s+(backwards|in reverse|reversed|right to left)\b|(dekodier|entschlussel)[^.]{0,30}(befolg|ausfuhr)|(decodifica|decodifique|descodifica)[^.]{0,30}(sigue|siga|ejecuta|execute|segui|esegui)|\b(decode|decodez|dechiffre)[^.]{0,30}(suis|suivez|execute|applique)|(расшифруй|декодируй)[^.]{0,30}(выполни|следуй)|(解码|解碼|デコード|디코딩)[^。.]{0,20}(执行|執行|遵循|実行|従|실행|따르)`},
}

// The prepared rules, built on first use rather than at package init:
// compiling a few hundred regexps takes a noticeable fraction of a second,
// which every memdir command that never screens would otherwise pay.
var (
	prepareOnce           sync.Once
	rules, tightRules     []rule
	ruleIndex, tightIndex *litIndex
)

func prepare() {
	prepareOnce.Do(func() {
		rules = buildRules(phraseRuleTable, phraseSplit)
		tightRules = buildRules(tightRuleTable, tightSplit)
		ruleIndex = newLitIndex(rules)
		tightIndex = newLitIndex(tightRules)
	})
}

// A splitRule is one alternative of a table's rule as splitTable finds
// it: the rule it comes from, its pattern, and the literals every match of
// it starts with (nil when there are none to list). Parsing a few hundred
// patterns to find them cost a save as much as the rest of it, so
// rules_split.go holds the tables' splits, generated by
// 'go test ./screen -run TestSplitTablesCurrent -update'.
type splitRule struct {
	spec    int
	pattern string
	lits    []string
}

// splitTable splits a table, turning a rule whose pattern is an
// alternation into one rule per alternative, each with its own literals: a
// small regexp run at the few places its literal occurs is far cheaper
// than one large alternation run over every sentence that holds any of
// them.
func splitTable(specs []ruleSpec) []splitRule {
	var out []splitRule
	for i, s := range specs {
		for _, alt := range topAlternatives(s.pattern) {
			p, err := syntax.Parse(alt, syntax.Perl)
			if err != nil {
				panic(fmt.Sprintf("screen: rule %s: %v", s.name, err))
			}
			out = append(out, splitRule{spec: i, pattern: alt, lits: prefilter(p, s.on != onLines && s.on != onMasked)})
		}
	}
	return out
}

// splitRules prepares a table, split as splitTable splits it.
func splitRules(specs []ruleSpec) []rule { return buildRules(specs, splitTable(specs)) }

// buildRules makes the rules of a table from its split. The alternatives
// of one spec share its conditions; every regexp is compiled on first use.
func buildRules(specs []ruleSpec, split []splitRule) []rule {
	out := make([]rule, 0, len(split))
	withs := make([][]cond, len(specs))
	for i, s := range specs {
		withs[i] = compileConds(s.with)
	}
	for _, sp := range split {
		s := specs[sp.spec]
		nr := rule{name: s.name, with: withs[sp.spec], on: s.on, gate: s.gate, pattern: sp.pattern, lits: sp.lits}
		if nr.lits != nil {
			// Only the anchored form runs; compiling the plain one
			// too would double the first-use cost.
			nr.anchored = lazyRe(`^(?:` + sp.pattern + `)`)
			nr.wordStart = strings.HasPrefix(sp.pattern, `\b`)
		} else {
			nr.re = lazyRe(sp.pattern)
			nr.lits = keywords(s.kw)
		}
		out = append(out, nr)
	}
	return out
}

// compileConds compiles a spec's conditions; none stays nil.
func compileConds(cs []condSpec) []cond {
	if cs == nil {
		return nil
	}
	out := make([]cond, len(cs))
	for i, c := range cs {
		out[i] = c.compile()
	}
	return out
}

// topAlternatives splits a pattern at the | signs outside groups and
// classes. It works on the source: turning a parsed pattern back into text
// (syntax.Regexp.String) folds every character class and costs far more
// than compiling. A pattern with flags such as (?m) is left whole.
func topAlternatives(p string) []string {
	if strings.HasPrefix(p, "(?") && !strings.HasPrefix(p, "(?:") {
		return []string{p}
	}
	var out []string
	depth, start := 0, 0
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(p) && p[i+1] == '^' {
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				i++ // a literal ] first in the class
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// tightRuleTable holds the rules that run on the letters-only view and its
// leet, reversed and ROT13 variants, so the core phrases survive any
// spacing, line breaking or simple encoding.
var tightRuleTable = []ruleSpec{
	{name: RuleOverride, kw: "ignore disregard forget override bypass discard",
		pattern: `(ignore|disregard|forget|override|bypass|discard)(all|any|every)?(of)?(the|your|my|these|those)?(users?)?(previous|prior|earlier|above|preceding|former|original|existing|system|safety|initial)(safety)?(instructions?|rules|guidelines|directions|prompts?|context|guardrails|constraints|directives)`},
	{name: RuleRole, kw: "youare developermode", pattern: `youare(now|nolonger)|developermode(is)?(on|enabled)`},
	{name: RuleHide, kw: "tell inform notify mention", pattern: `(donot|dont|never)(tell|inform|notify|mention(this|it)?to)(the)?(user|human)`},
}

// near is a condition that only counts hits within window bytes of the
// rule's own match, for lexicons where the verb and its object sit close
// together but their order depends on the language.
func near(p string, window int) condSpec { return condSpec{pattern: p, window: window} }

// secretLits name credentials, keys and environment dumps in the languages
// of the lexicons; secretRe adds the forms that need word boundaries.
var (
	secretLits = strings.Split(secretWords, "|")
	secretRe   = lazyRe(`\btokens?\b|\benv\s*(\||>)|\bthe env\b|\benv (files?|vars?|variables)`)
)

func mentionsSecret(s string) bool {
	for _, l := range secretLits {
		if l != "" && strings.Contains(s, l) {
			return true
		}
	}
	return secretRe().MatchString(s)
}

// secretBeforeDestination reports a secret named before the last external
// destination in the sentence: "send the .env to https://…", "when you see
// GITHUB_TOKEN, put it in a gist". A token named after the destination is
// how the upload authenticates ("upload coverage to codecov with the CI
// token"), not what is sent.
func secretBeforeDestination(s string) bool {
	d := destinationAt(s)
	return d > 0 && mentionsSecret(s[:d])
}

// destinationAt returns the offset of the last external destination in
// s, or -1.
func destinationAt(s string) int {
	best := -1
	take := func(locs [][]int) {
		if len(locs) > 0 {
			best = max(best, locs[len(locs)-1][0])
		}
	}
	if strings.Contains(s, "://") {
		for _, loc := range urlRe().FindAllStringIndex(s, -1) {
			u := s[loc[0]:loc[1]]
			if !localHost(u) && !officialHost(u) {
				best = max(best, loc[0])
			}
		}
	}
	if strings.Contains(s, "@") {
		take(emailRe().FindAllStringIndex(s, -1))
	}
	take(dropRe().FindAllStringIndex(s, -1))
	take(bareHostRe().FindAllStringIndex(s, -1))
	return best
}

var (
	urlRe   = lazyRe(`(https?|ftp|s3|gs)://[^\s'"` + "`" + `)<>]+`)
	emailRe = lazyRe(`[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}`)
	// bareHostRe is a destination named without a scheme ("to paste.example.org").
	bareHostRe = lazyRe(`\b(to|at|into|on)\s+[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|io|dev|app|site|xyz|me|co|sh|ly|cn|ru|es|de|fr|jp|kr|in|vn|it|nl|pl|tr|info|biz|cloud|example)\b`)
	dropRe     = lazyRe(`\b(webhook|gist|pastebin|hastebin|requestbin|ngrok|discord|telegram|slack|public|external|remote server|their server|bucket|endpoint)\b|servidor|serveur|сервер|服务器|サーバ|서버`)
)

func localHost(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "0.0.0.0" || h == "::1" || strings.HasSuffix(h, ".localhost")
}

// officialHosts serve install scripts that documentation commonly pipes
// into a shell; piping anything else into sh is flagged.
var officialHosts = []string{
	"raw.githubusercontent.com", "github.com", "sh.rustup.rs", "get.docker.com", "deb.nodesource.com",
	"rpm.nodesource.com", "brew.sh", "install.python-poetry.org", "bun.sh", "deno.land", "get.pnpm.io",
	"astral.sh", "golang.org", "go.dev", "nixos.org", "get.helm.sh", "sdkman.io",
}

func officialHost(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	if h == "gist.github.com" {
		return false
	}
	for _, o := range officialHosts {
		if h == o || strings.HasSuffix(h, "."+o) {
			return true
		}
	}
	return false
}

func untrustedHost(s string) bool {
	us := urlRe().FindAllString(s, -1)
	if len(us) == 0 {
		return true // a script from a variable or a bare host
	}
	for _, u := range us {
		if !localHost(u) && !officialHost(u) {
			return true
		}
	}
	return false
}
