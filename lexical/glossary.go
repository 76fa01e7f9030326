package lexical

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// The glossary bridges English and Chinese, the two languages memories of
// one project are most often mixed in: a question asked in one language
// should find a memory written in the other. It is general software
// engineering vocabulary, organised by domain, not a list of any one
// project's words. Each entry is "中文, 中文… | english, english…": every
// term on one side translates every term on the other.
//
// A query is expanded with the translations of the terms it contains that
// occur in the index, at GlossaryWeight each (see Options), so a
// translation helps a memory that uses it and never penalises one that
// does not.
var glossaryEntries = []string{
	// Code and design.
	"代码 | code", "源码, 源代码 | source code", "函数 | function", "方法 | method", "类 | class",
	"接口 | interface, api, endpoint", "端点 | endpoint", "类型 | type", "变量 | variable", "常量 | constant",
	"参数 | parameter, argument, param", "返回值 | return value", "错误, 报错 | error", "异常 | exception",
	"缺陷, 漏洞 | bug", "修复, 修 | fix", "功能, 特性 | feature", "需求 | requirement", "设计 | design",
	"架构 | architecture", "模块 | module", "包 | package", "库 | library", "依赖 | dependency",
	"框架 | framework", "组件 | component", "服务 | service", "微服务 | microservice", "单体 | monolith",
	"请求 | request", "响应 | response", "客户端 | client", "服务端, 服务器 | server", "配置 | config, configuration",
	"设置 | settings, setting", "选项 | option", "环境 | environment, env", "环境变量 | environment variable",
	"日志 | log, logging", "调试 | debug, debugging", "重构 | refactor, refactoring", "注释 | comment",
	"命名 | naming, name", "名称, 名字 | name", "规范, 约定 | convention", "规则 | rule", "标准 | standard",
	"最佳实践 | best practice", "示例, 例子 | example", "模板 | template", "泛型 | generic, generics",
	"并发 | concurrency, concurrent", "线程 | thread", "协程 | goroutine, coroutine", "锁 | lock, mutex",
	"通道 | channel", "上下文 | context", "超时 | timeout", "重试 | retry", "回调 | callback",
	"序列化 | serialization, serialize", "编码 | encoding", "字符串 | string", "数组 | array", "映射 | map",
	"生成, 生成的 | generated, generate", "手写 | hand-written, hand-edit", "校验, 验证 | validation, validate",
	// Testing.
	"测试 | test, testing", "单元测试, 单测 | unit test", "集成测试 | integration test",
	"端到端 | end-to-end, e2e", "压测, 压力测试, 负载测试 | load test, load testing, stress test",
	"性能测试, 基准测试 | benchmark, performance test", "覆盖率 | coverage", "模拟, 桩 | mock, stub, fake",
	"不稳定, 偶发 | flaky, flake", "断言 | assertion, assert", "回归 | regression", "测试用例, 用例 | test case",
	"竞态, 竞争 | race, race condition, data race",
	// Version control and review.
	"提交 | commit", "提交信息 | commit message", "分支 | branch", "合并 | merge", "合并请求, 拉取请求 | pull request, pr",
	"代码审查, 代码评审, 评审, 审查 | code review, review", "变基 | rebase", "标签 | tag", "冲突 | conflict",
	"仓库 | repository, repo", "变更日志 | changelog", "版本 | version", "大版本 | major version",
	// Build, CI/CD and operations.
	"构建 | build", "流水线 | pipeline", "持续集成 | continuous integration, ci", "部署 | deploy, deployment",
	"发布, 上线 | release, rollout, ship", "回滚 | rollback, roll back", "灰度, 金丝雀 | canary",
	"预发, 预发布 | staging", "生产, 生产环境, 线上 | production, prod", "集群 | cluster", "节点 | node",
	"容器 | container", "镜像 | image", "命名空间 | namespace", "监控 | monitoring, monitor",
	"告警, 报警 | alert, alerting", "面板, 看板, 仪表盘 | dashboard, board", "指标 | metric, metrics",
	"值班 | on-call, oncall", "事故, 故障 | incident, outage", "宕机, 停机 | outage, downtime",
	"复盘, 事故复盘 | postmortem, post-mortem, retrospective, write-up", "运维手册, 操作手册 | runbook",
	"升级 | upgrade", "降级 | downgrade, degrade", "迁移 | migration, migrate", "备份 | backup", "恢复 | restore, recovery",
	"扩容 | scale up, scale out", "缩容 | scale down", "容量 | capacity", "冻结, 封版, 封网 | freeze, code freeze",
	"维护 | maintenance", "可用性 | availability", "工单 | ticket", "脚本 | script", "定时任务 | cron, cron job",
	"任务 | task, job", "调度 | scheduling, scheduler", "排期 | schedule", "限流 | rate limit, rate limiting, throttling",
	"熔断 | circuit breaker", "负载均衡 | load balancer, load balancing", "代理 | proxy", "网关 | gateway",
	"网络 | network", "域名 | domain", "证书 | certificate, cert", "密钥 | secret, key", "令牌 | token",
	"密码 | password", "权限 | permission, access", "认证 | authentication, auth", "授权 | authorization",
	"登录 | login, sign in", "加密 | encryption, encrypt", "安全 | security", "只读 | read-only, readonly",
	"延迟 | latency, delay", "吞吐, 吞吐量 | throughput", "性能 | performance", "内存 | memory",
	"磁盘 | disk", "存储 | storage", "缓存 | cache, caching", "队列 | queue", "消息 | message",
	"事件 | event", "主题 | topic", "消费者 | consumer", "生产者 | producer", "幂等 | idempotent, idempotency",
	"事务 | transaction", "重复 | duplicate", "去重 | dedupe, deduplication",
	// Data.
	"数据 | data", "数据库 | database, db", "表 | table", "列, 字段 | column, field", "行 | row",
	"索引 | index", "查询 | query", "模式 | schema", "分区 | partition", "复制 | replication, replica",
	"主键 | primary key", "外键 | foreign key", "分析 | analytics, analysis", "数据仓库, 数仓 | data warehouse, warehouse",
	"报表 | report", "保留, 留存 | retention", "回填, 补数 | backfill", "流 | stream", "批处理 | batch",
	"聚合 | aggregate, aggregation", "轨迹 | track, trace, trajectory", "清理 | cleanup, clean up", "归档 | archive",
	// Front end.
	"前端 | frontend, front-end", "后端 | backend, back-end", "页面 | page", "按钮 | button", "表单 | form",
	"输入框 | input", "样式 | style, styling", "布局 | layout", "状态 | state", "路由 | route, router, routing",
	"国际化 | i18n, internationalization", "本地化 | localization, locale", "翻译 | translation",
	"中英文, 双语 | bilingual, i18n, locale", "中文 | chinese", "英文 | english", "语言 | language",
	"无障碍 | accessibility, a11y", "主题 | theme", "颜色 | color, colour", "图标 | icon", "字体 | font",
	"浏览器 | browser", "移动端 | mobile", "界面 | ui, interface", "导出 | export", "导入 | import",
	"默认导出 | default export", "具名导出 | named export", "类型定义 | type definition", "响应类型 | response type",
	// People, planning and documents.
	"团队 | team", "负责人 | owner", "所有者 | owner", "截止日期 | deadline", "计划 | plan", "优先级 | priority",
	"路线图 | roadmap", "会议 | meeting", "文档 | document, documentation, doc, docs", "决定, 决策 | decision",
	"客户 | customer, client", "用户 | user", "租户 | tenant", "合同 | contract", "预算 | budget",
	"成本, 费用 | cost", "审批 | approval", "评估 | evaluation, assessment", "风险 | risk",
	// Everyday verbs and adjectives of the trade.
	"慢 | slow", "快 | fast", "失败 | fail, failure, failed", "崩溃 | crash", "卡住 | hang, stuck",
	"空 | empty", "空值 | null", "删除 | delete, remove", "移除 | remove", "添加, 新增, 加 | add",
	"创建, 新建 | create, new", "更新 | update", "修改, 变更, 改 | change, modify", "重命名 | rename",
	"移动 | move", "拷贝 | copy", "搜索, 查找 | search, find", "过滤, 筛选 | filter", "排序 | sort",
	"上传 | upload", "下载 | download", "读取 | read", "写入 | write", "访问 | access",
	"结果 | result, results", "历史 | history", "上次 | last time, previous", "旧 | old, legacy",
	"当前 | current", "格式 | format", "时间 | time", "日期 | date", "时区 | timezone, time zone",
	"准备 | prepare, preparation", "检查 | check", "运行, 跑 | run", "执行 | execute, run",
	"对比, 比较 | compare, comparison, diff", "收紧 | tighten, stricter", "跳过 | skip", "忽略 | ignore",
}

// GlossaryWeight is the default weight of a glossary translation in a query
// (a typed term weighs 1).
const GlossaryWeight = 0.5

type glossary struct {
	// zh maps a Chinese term to the English terms (already tokenised)
	// it translates to; zhKeys lists its keys in a fixed order, so that
	// searches are deterministic.
	zh     map[string][]string
	zhKeys []string
	// en maps an English term, as a space-joined run of tokens, to the
	// Chinese terms (tokenised as bigrams) it translates to.
	en map[string][]string
	// enLen lists the token counts of English entries, longest first.
	enLen []int
}

// loadGlossary returns the glossary, from the table buildGlossary's
// output was generated into (glossary_table.go): building it tokenises
// every entry, about a millisecond, on the hook's path.
var loadGlossary = sync.OnceValue(glossaryTable)

// buildGlossary builds the glossary from glossaryEntries.
// TestGlossaryTable checks glossary_table.go against it; run
// go test ./lexical -run TestGlossaryTable -update after changing them.
func buildGlossary() *glossary {
	g := &glossary{zh: map[string][]string{}, en: map[string][]string{}}
	lens := map[int]bool{}
	for _, e := range glossaryEntries {
		zhSide, enSide, ok := strings.Cut(e, "|")
		if !ok {
			panic("lexical: glossary entry without '|': " + e)
		}
		var zhTerms, enTerms []string
		var enKeys []string
		for z := range strings.SplitSeq(zhSide, ",") {
			if z = strings.TrimSpace(z); z != "" {
				zhTerms = append(zhTerms, z)
			}
		}
		for w := range strings.SplitSeq(enSide, ",") {
			toks := plainTokens(strings.TrimSpace(w))
			if len(toks) == 0 {
				continue
			}
			enKeys = append(enKeys, strings.Join(toks, " "))
			enTerms = append(enTerms, toks...)
			lens[len(toks)] = true
		}
		for _, z := range zhTerms {
			g.zh[z] = appendNew(g.zh[z], enTerms...)
		}
		var zhToks []string
		for _, z := range zhTerms {
			zhToks = append(zhToks, Tokenize(z)...)
		}
		for _, k := range enKeys {
			g.en[k] = appendNew(g.en[k], zhToks...)
		}
	}
	for n := range lens {
		g.enLen = append(g.enLen, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(g.enLen)))
	for z := range g.zh {
		if utf8.RuneCountInString(z) > 1 {
			g.zhKeys = append(g.zhKeys, z)
		}
	}
	sort.Strings(g.zhKeys)
	return g
}

// plainTokens tokenises an English phrase into its word terms in order,
// leaving out the joined forms a compound adds ("end-to-end" gives end, to,
// end), so that phrases can be matched as runs.
func plainTokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		out = append(out, Tokenize(w)...)
	}
	return out
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		dup := slices.Contains(list, it)
		if !dup {
			list = append(list, it)
		}
	}
	return list
}

// translations returns the glossary translations of a query: the English
// terms of every Chinese entry the query contains, and the Chinese terms of
// every English entry whose words appear in a row in it.
func (g *glossary) translations(query string) []string {
	var out []string
	if hasCJK(query) {
		// One character is too often part of an unrelated word (行 in
		// 执行, 表 in 表单) to be matched on its own, so zhKeys holds
		// only longer terms.
		for _, z := range g.zhKeys {
			if strings.Contains(query, z) {
				out = appendNew(out, g.zh[z]...)
			}
		}
	}
	words := plainTokens(query)
	for _, n := range g.enLen {
		for i := 0; i+n <= len(words); i++ {
			if zh, ok := g.en[strings.Join(words[i:i+n], " ")]; ok {
				out = appendNew(out, zh...)
			}
		}
	}
	return out
}

func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}
