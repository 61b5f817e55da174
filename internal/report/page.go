package report

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"html"
	"io"
)

// The page's style sheet and script, written for it (no framework, no
// external file): inlined into every report.
var (
	//go:embed page/report.css
	pageCSS string
	//go:embed page/report.js
	pageJS string
)

// contentPolicy forbids the page every fetch: no script, style, font,
// image or connection from anywhere but the page itself (its inline
// elements), so opening it makes no network request.
const contentPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// WritePage writes the HTML page of d: the data as JSON in a
// <script type="application/json" id="data"> element, then the script that
// draws it.
func WritePage(w io.Writer, d *Data) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"" + contentPolicy + "\">\n")
	bw.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	bw.WriteString("<title>" + html.EscapeString(d.Title) + "</title>\n<style>\n")
	bw.WriteString(pageCSS)
	bw.WriteString("</style>\n</head>\n<body>\n<div id=\"app\"><noscript>This report draws itself with JavaScript: enable it to see the report.</noscript></div>\n")
	bw.WriteString("<script type=\"application/json\" id=\"data\">")
	if err := writeJSON(bw, d); err != nil {
		return err
	}
	bw.WriteString("</script>\n<script>\n")
	bw.WriteString(pageJS)
	bw.WriteString("</script>\n</body>\n</html>\n")
	return bw.Flush()
}

// writeJSON writes v as JSON safe inside a <script> element: encoding/json
// escapes "<", ">" and "&" (as \u003c, \u003e, \u0026) and U+2028 and
// U+2029, so neither "</script>" nor "<!--" can appear in it.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	return enc.Encode(v)
}
