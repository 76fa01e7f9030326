// Package dailylog appends to the daily logs of Claude Code's assistant
// mode: one Markdown file a day under the memory directory,
// logs/YYYY/MM/YYYY-MM-DD.md ([Path]), that agents extend
// with timestamped bullets and never reorganise.
package dailylog
