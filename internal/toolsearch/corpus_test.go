package toolsearch

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.json from the generator")

// The labeled corpus: 1,000 self-coded tools as an agent might have written
// them, generated from families (verbs × objects) so that most tools have
// near neighbours (convert_celsius_to_kelvin beside
// convert_celsius_to_fahrenheit, count_words beside count_sentences), and
// testdata/requests.json, requests written as an owner would phrase them,
// each labeled with the one right tool and a keyword query the model might
// pass to find_tools.

type param struct{ name, desc string }

// schema renders parameters as a JSON schema of string properties.
func schema(ps ...param) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	var req []string
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.name)
		desc, _ := json.Marshal(p.desc)
		fmt.Fprintf(&b, `%s:{"type":"string","description":%s}`, name, desc)
		req = append(req, string(name))
	}
	fmt.Fprintf(&b, `},"required":[%s]}`, strings.Join(req, ","))
	return json.RawMessage(b.String())
}

type toolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// verb is a verb of a family: its name part, a description template (%s is
// the object's phrase) and its own parameters.
type verb struct {
	name, desc string
	params     []param
}

type object struct{ name, phrase string }

type family struct {
	verbs   []verb
	objects []object
	params  []param // every tool of the family takes these
	nameFn  func(v, o string) string
}

func (f family) tools() []toolSpec {
	var out []toolSpec
	for _, v := range f.verbs {
		for _, o := range f.objects {
			name := v.name + "_" + o.name
			if f.nameFn != nil {
				name = f.nameFn(v.name, o.name)
			}
			ps := append(append([]param{}, f.params...), v.params...)
			out = append(out, toolSpec{name, fmt.Sprintf(v.desc, o.phrase), schema(ps...)})
		}
	}
	return out
}

// pairs makes convert_a_to_b tools for every ordered pair of units.
func pairs(kind string, units []object, extra string) []toolSpec {
	var out []toolSpec
	for _, a := range units {
		for _, c := range units {
			if a.name == c.name {
				continue
			}
			out = append(out, toolSpec{
				Name:        "convert_" + a.name + "_to_" + c.name,
				Description: fmt.Sprintf("Converts a %s given in %s to %s.%s", kind, a.phrase, c.phrase, extra),
				Parameters:  schema(param{"value", "the " + kind + " in " + a.phrase}),
			})
		}
	}
	return out
}

func textFamily() family {
	return family{
		verbs: []verb{
			{name: "count", desc: "Counts the %s in a text and returns the number."},
			{name: "extract", desc: "Finds the %s in a text and returns them as a list."},
			{name: "remove", desc: "Returns the text with the %s deleted."},
			{name: "highlight", desc: "Wraps the %s of a text in markers so they stand out."},
			{name: "list_unique", desc: "Returns each distinct item among the %s of a text once."},
		},
		objects: []object{
			{"words", "words"}, {"sentences", "sentences"}, {"characters", "characters"},
			{"lines", "lines"}, {"vowels", "vowels"}, {"urls", "URLs and web addresses"},
			{"emails", "e-mail addresses"}, {"hashtags", "#hashtags"}, {"mentions", "@mentions"},
			{"numbers", "numeric values"}, {"dates", "dates"}, {"phone_numbers", "telephone numbers"},
			{"paragraphs", "paragraphs"}, {"digits", "digits"}, {"punctuation", "punctuation marks"},
			{"stopwords", "common filler words"}, {"emojis", "emoji"}, {"quotes", "quoted passages"},
		},
		params: []param{{"text", "the input text"}},
	}
}

func tableFamily() family {
	return family{
		verbs: []verb{
			{name: "sum", desc: "Adds up the numeric values of %s."},
			{name: "average", desc: "Computes the arithmetic mean of the values of %s."},
			{name: "max", desc: "Returns the largest value of %s."},
			{name: "min", desc: "Returns the smallest value of %s."},
			{name: "count_distinct", desc: "Counts how many different values occur in %s."},
			{name: "sort_by", desc: "Sorts the rows by %s."},
			{name: "filter_by", desc: "Keeps the rows where %s matches a condition.", params: []param{{"condition", "an expression such as '> 10' or '= paid'"}}},
			{name: "median", desc: "Returns the middle value of %s."},
			{name: "histogram", desc: "Buckets the values of %s and draws a text histogram."},
		},
		objects: []object{
			{"csv_column", "a named column of a CSV file"}, {"tsv_column", "a column of a tab-separated file"},
			{"json_field", "a field across the objects of a JSON array"}, {"spreadsheet_column", "a column of an .xlsx or .ods sheet"},
			{"log_field", "a field of structured log lines"}, {"sqlite_column", "a column of an SQLite table"},
			{"parquet_column", "a column of a Parquet file"}, {"ods_column", "a column of an OpenDocument spreadsheet"},
			{"jsonl_field", "a field of newline-delimited JSON records"},
		},
		params: []param{{"path", "the file to read"}, {"column", "the column or field name"}},
	}
}

func webFamily() family {
	return family{
		verbs: []verb{
			{name: "fetch", desc: "Downloads and returns %s."},
			{name: "watch", desc: "Checks %s periodically and notifies when it changes."},
			{name: "log", desc: "Appends %s to a history file with a timestamp."},
		},
		objects: []object{
			{"rss_titles", "the item headlines of an RSS or Atom feed"}, {"page_title", "the <title> of a web page"},
			{"page_links", "the hyperlinks of a web page"}, {"news_headlines", "the front-page headlines of a news site"},
			{"weather_forecast", "the meteorological outlook for a place for the next days"},
			{"exchange_rate", "the rate between two currencies"}, {"stock_price", "the last quote of a share ticker"},
			{"github_stars", "the stargazer count of a GitHub repository"}, {"wikipedia_summary", "the lead section of a Wikipedia article"},
			{"hacker_news_top", "the highest ranked submissions on Hacker News"}, {"reddit_top_posts", "the best posts of a subreddit"},
			{"podcast_episodes", "the latest episodes of a podcast"}, {"youtube_video_title", "the title of a YouTube video"},
			{"crypto_price", "the market value of a cryptocurrency such as BTC or ETH"}, {"air_quality", "the air quality index of a city"},
			{"package_version", "the newest release of a software package"},
			{"sports_scores", "the latest results of a team"}, {"flight_status", "the departure and arrival of a flight number"},
			{"train_departures", "the next departures from a railway station"}, {"sunrise_time", "sunrise and sunset for a place"},
			{"moon_phase", "the current lunar phase"}, {"earthquakes", "recent seismic events near a place"},
		},
		params: []param{{"source", "URL, ticker, place or name the data is about"}},
	}
}

func personalFamily() family {
	return family{
		verbs: []verb{
			{name: "add", desc: "Records a new entry: %s."},
			{name: "list", desc: "Shows the stored entries: %s."},
			{name: "remove", desc: "Deletes an entry: %s."},
			{name: "summarize", desc: "Totals and groups the stored entries (%s) by week and month."},
			{name: "export", desc: "Writes all stored entries (%s) to a CSV file."},
		},
		objects: []object{
			{"todo", "a task to do"}, {"grocery_item", "an item to buy at the supermarket"},
			{"expense", "money spent, with amount and category"}, {"habit", "a habit check-in"},
			{"reminder", "a timed reminder"}, {"bookmark", "a saved web address"}, {"note", "a short note"},
			{"contact", "a person's phone and address"}, {"workout", "an exercise session"},
			{"meal", "a meal eaten, with calories"}, {"reading_list", "a book to read"},
			{"birthday", "a person's date of birth"}, {"water_intake", "a drink of water in ml"},
			{"mood", "a mood rating"}, {"sleep", "hours slept"}, {"medication", "a dose of medicine taken"},
		},
		params: []param{{"entry", "the entry, in free text"}},
		nameFn: func(v, o string) string {
			if v == "list" || v == "summarize" || v == "export" {
				return v + "_" + plural(o)
			}
			return v + "_" + o
		},
	}
}

func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "_list") || strings.HasSuffix(s, "_intake") || s == "sleep" || s == "medication" || s == "mood":
		return s
	case strings.HasSuffix(s, "y") && !strings.HasSuffix(s, "ay"):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

func encodingFamily() family {
	return family{
		verbs: []verb{
			{name: "encode", desc: "Encodes a string as %s."},
			{name: "decode", desc: "Decodes a string given as %s back to plain text."},
		},
		objects: []object{
			{"base64", "Base64"}, {"url", "percent-escaped URL component"}, {"hex", "hexadecimal bytes"},
			{"rot13", "ROT13"}, {"html_entities", "HTML entities"}, {"morse", "Morse code dots and dashes"},
			{"binary", "ones and zeros"}, {"punycode", "Punycode"}, {"quoted_printable", "quoted-printable"},
			{"base32", "Base32"}, {"jwt", "a JSON Web Token's parts"}, {"unicode_escapes", "\\u escapes"},
		},
		params: []param{{"input", "the string"}},
	}
}

func hashFamily() family {
	return family{
		verbs: []verb{
			{name: "hash", desc: "Computes the %s digest of a string."},
			{name: "hash_file", desc: "Computes the %s digest of a file's contents."},
			{name: "verify", desc: "Checks a file against an expected %s checksum."},
		},
		objects: []object{{"md5", "MD5"}, {"sha1", "SHA-1"}, {"sha256", "SHA-256"}, {"sha512", "SHA-512"}, {"crc32", "CRC-32"}, {"blake2b", "BLAKE2b"}},
		params:  []param{{"input", "the string or file path"}},
	}
}

func formatFamily() []toolSpec {
	formats := []object{{"json", "JSON"}, {"yaml", "YAML"}, {"toml", "TOML"}, {"xml", "XML"}, {"csv", "CSV"}, {"markdown", "Markdown"}, {"html", "HTML"}, {"ini", "INI"}}
	var out []toolSpec
	for _, a := range formats {
		for _, c := range formats {
			if a != c {
				out = append(out, toolSpec{"convert_" + a.name + "_to_" + c.name,
					fmt.Sprintf("Transforms a %s document into the equivalent %s.", a.phrase, c.phrase),
					schema(param{"document", "the " + a.phrase + " source"})})
			}
		}
	}
	f := family{
		verbs: []verb{
			{name: "validate", desc: "Parses a %s document and reports syntax errors with line numbers."},
			{name: "pretty_print", desc: "Reformats a %s document with indentation and line breaks."},
			{name: "minify", desc: "Removes all unnecessary whitespace from a %s document."},
			{name: "diff", desc: "Shows the structural differences between two %s documents.", params: []param{{"other", "the second document"}}},
		},
		objects: formats,
		params:  []param{{"document", "the source"}},
	}
	return append(out, f.tools()...)
}

func fileFamily() family {
	return family{
		verbs: []verb{
			{name: "find", desc: "Searches a directory tree for %s."},
			{name: "count", desc: "Counts %s under a directory."},
			{name: "delete", desc: "Removes %s under a directory after listing them."},
			{name: "archive", desc: "Packs %s under a directory into a zip archive."},
		},
		objects: []object{
			{"large_files", "files above a size threshold"}, {"duplicate_files", "files whose contents are identical"},
			{"empty_folders", "directories without entries"}, {"old_logs", "log files older than N days"},
			{"images", "picture files (jpg, png, gif)"}, {"broken_symlinks", "symbolic links whose target is missing"},
			{"recent_files", "files modified in the last N days"}, {"temp_files", "temporary and cache files"},
		},
		params: []param{{"directory", "where to look"}},
		nameFn: func(v, o string) string { return v + "_" + o },
	}
}

func imageFamily() []toolSpec {
	var out []toolSpec
	for _, t := range []struct{ name, desc string }{
		{"resize_image", "Scales a picture to a given width and height, keeping the aspect ratio."},
		{"crop_image", "Cuts a rectangle out of a picture."},
		{"rotate_image", "Turns a picture by 90, 180 or 270 degrees."},
		{"grayscale_image", "Removes the colour from a picture."},
		{"thumbnail_image", "Makes a small preview of a picture."},
		{"read_image_exif", "Returns the camera metadata (EXIF) of a photo."},
		{"strip_image_exif", "Removes the camera metadata (EXIF) from a photo."},
		{"blur_image", "Applies a Gaussian blur to a picture."},
		{"watermark_image", "Stamps a text watermark on a picture."},
		{"compress_image", "Re-encodes a picture at lower quality to reduce its size."},
		{"image_dimensions", "Returns the width and height of a picture in pixels."},
		{"dominant_colors_image", "Lists the most frequent colours of a picture."},
	} {
		out = append(out, toolSpec{t.name, t.desc, schema(param{"path", "the picture file"})})
	}
	fmts := []object{{"png", "PNG"}, {"jpeg", "JPEG"}, {"webp", "WebP"}, {"gif", "GIF"}, {"bmp", "BMP"}}
	for _, a := range fmts {
		for _, c := range fmts {
			if a != c {
				out = append(out, toolSpec{"convert_" + a.name + "_to_" + c.name,
					fmt.Sprintf("Re-encodes a %s picture as %s.", a.phrase, c.phrase), schema(param{"path", "the picture file"})})
			}
		}
	}
	return out
}

// singles are tools without a family.
var singles = []struct{ name, desc string }{
	{"days_until", "Number of days from today to a given date."},
	{"days_between", "Number of days between two dates."},
	{"weekday_of_date", "Returns the name of the day (Monday...Sunday) a calendar date falls on."},
	{"add_days_to_date", "Shifts a date forward or back by N days."},
	{"current_time_in_timezone", "Returns the clock time now in an IANA zone such as Asia/Tokyo or in a city."},
	{"convert_timezone", "Converts a time from one zone to another."},
	{"unix_timestamp_to_date", "Turns seconds since 1970 into a readable date."},
	{"date_to_unix_timestamp", "Turns a readable date into seconds since 1970."},
	{"iso_week_number", "Returns the ISO week number of a date."},
	{"age_from_birthdate", "Computes a person's age in years from the date they were born."},
	{"is_leap_year", "Tells whether a year has 366 days."},
	{"countdown_timer", "Starts a timer that notifies after N minutes."},
	{"is_prime", "Tests whether an integer is a prime number."},
	{"factorial", "Computes n! for a non-negative integer n."},
	{"fibonacci", "Returns the n-th Fibonacci number."},
	{"gcd", "Greatest common divisor of two integers."},
	{"lcm", "Least common multiple of two integers."},
	{"prime_factors", "Decomposes an integer into its prime factors."},
	{"calculate_tip", "Gratuity amount and total for a restaurant check at a given rate."},
	{"split_bill", "Divides a total among N people, with tip."},
	{"calculate_loan_payment", "Periodic installment of an amortized loan from principal, annual rate and term."},
	{"compound_interest", "Future value of savings with compound interest."},
	{"calculate_bmi", "Weight in kg divided by the square of height in metres, with the WHO category."},
	{"calculate_percentage", "What percent one number is of another."},
	{"percentage_change", "Relative change between an old and a new value, in percent."},
	{"solve_quadratic", "Roots of ax^2+bx+c."},
	{"roman_to_integer", "Converts Roman numerals to an integer."},
	{"integer_to_roman", "Converts an integer to Roman numerals."},
	{"evaluate_expression", "Evaluates an arithmetic expression like 3*(4+5)."},
	{"ping_host", "Sends ICMP echo requests to a host and reports round-trip times and reachability."},
	{"dns_lookup", "Resolves a domain name's A, AAAA, MX and TXT records."},
	{"whois_domain", "Returns the registrar and dates of a domain's registration."},
	{"check_ssl_expiry", "Connects to a host on port 443 and reports when its X.509 certificate runs out."},
	{"scan_open_ports", "Checks which TCP ports of a host accept connections."},
	{"http_status", "Returns the HTTP status code and headers a URL answers with."},
	{"my_public_ip", "Returns the address this machine appears from on the internet."},
	{"traceroute_host", "Lists the network hops to a host."},
	{"speedtest", "Measures download and upload bandwidth."},
	{"wifi_signal_strength", "Reports the wireless signal level."},
	{"generate_password", "Creates a random secret of given length from letters, digits and symbols."},
	{"generate_passphrase", "Creates a random passphrase from dictionary words."},
	{"generate_uuid", "Returns a new random version-4 UUID identifier."},
	{"generate_random_number", "Returns a random integer between two bounds."},
	{"generate_qr_code", "Renders text or a URL as a QR code image."},
	{"generate_lorem_ipsum", "Returns placeholder Latin text."},
	{"generate_slug", "Makes a lowercase, hyphenated, ASCII-only identifier from a title for use in URLs."},
	{"generate_username", "Suggests an available-looking username."},
	{"roll_dice", "Rolls N dice with S sides."},
	{"flip_coin", "Returns heads or tails."},
	{"pick_random_item", "Chooses one item from a list at random."},
	{"detect_language", "Identifies the natural language a text is written in."},
	{"spell_check", "Lists misspelled words with suggestions."},
	{"readability_score", "Flesch reading-ease score of a text."},
	{"word_frequency", "Most frequent terms of a text with their counts."},
	{"reverse_text", "Returns the text backwards."},
	{"to_title_case", "Capitalizes Each Word."},
	{"to_snake_case", "Converts an identifier to snake_case."},
	{"to_camel_case", "Converts an identifier to camelCase."},
	{"text_similarity", "Similarity score between two texts."},
	{"summarize_text", "Shortens a long text to a few sentences."},
	{"count_git_commits", "Number of commits in a repository in a period, optionally by author."},
	{"list_git_branches", "Lists the branches of a repository with their last commit."},
	{"git_blame_line", "Shows who last changed a line of a file."},
	{"git_changed_files", "Lists files changed since a commit."},
	{"git_contributors", "Lists authors of a repository by number of commits."},
	{"convert_hex_to_rgb", "Turns a #rrggbb color code into red, green and blue components."},
	{"convert_rgb_to_hex", "Turns red, green and blue components into a #rrggbb code."},
	{"convert_rgb_to_hsl", "Turns RGB into hue, saturation, lightness."},
	{"contrast_ratio", "WCAG contrast ratio between two colours."},
	{"random_color_palette", "Generates five harmonious colours."},
	{"disk_usage", "Shows used and free space per mounted filesystem."},
	{"cpu_temperature", "Reads the processor's temperature sensor."},
	{"memory_usage", "Shows used and free RAM."},
	{"list_processes", "Lists running processes by CPU use."},
	{"system_uptime", "How long the machine has been running."},
	{"battery_level", "Charge level of the battery."},
}

func moreFamilies() []family {
	return []family{
		{
			verbs: []verb{
				{name: "turn_on", desc: "Switches on %s through the home automation hub."},
				{name: "turn_off", desc: "Switches off %s through the home automation hub."},
				{name: "status_of", desc: "Reports whether %s is on and its settings."},
				{name: "schedule", desc: "Sets a daily on/off schedule for %s.", params: []param{{"times", "on and off times"}}},
			},
			objects: []object{
				{"living_room_lights", "the living-room lamps"}, {"bedroom_lights", "the bedroom lamps"}, {"heater", "the radiator thermostat"},
				{"fan", "the ceiling fan"}, {"coffee_machine", "the coffee maker"}, {"garage_door", "the garage door opener"},
				{"tv", "the television"}, {"vacuum_robot", "the robot vacuum cleaner"}, {"sprinkler", "the garden irrigation"},
				{"air_conditioner", "the AC unit"},
			},
			params: []param{{"device", "the device id"}},
		},
		{
			verbs: []verb{
				{name: "send", desc: "Delivers %s now.", params: []param{{"recipient", "who receives it"}}},
				{name: "schedule", desc: "Queues %s for a later time.", params: []param{{"at", "when to deliver"}}},
			},
			objects: []object{
				{"telegram_message", "a Telegram chat message"}, {"email", "an e-mail"}, {"sms", "a text message to a phone"},
				{"slack_message", "a Slack post"}, {"discord_message", "a Discord post"}, {"push_notification", "a phone push alert"},
				{"matrix_message", "a Matrix room message"},
			},
			params: []param{{"body", "the content"}},
		},
		{
			verbs: []verb{
				{name: "convert", desc: "Transcodes %s to another container or codec.", params: []param{{"format", "the target format"}}},
				{name: "trim", desc: "Cuts %s between two timestamps."},
				{name: "extract_audio_from", desc: "Saves the sound track of %s."},
				{name: "duration_of", desc: "Returns the playing time of %s."},
				{name: "normalize_volume_of", desc: "Evens out the loudness of %s."},
			},
			objects: []object{{"mp3_file", "an MP3 recording"}, {"wav_file", "a WAV recording"}, {"mp4_file", "an MP4 video"}, {"mkv_file", "an MKV video"}, {"flac_file", "a FLAC recording"}, {"ogg_file", "an Ogg recording"}},
			params:  []param{{"path", "the media file"}},
		},
		{
			verbs: []verb{
				{name: "extract_text_from", desc: "Returns the plain text of %s."},
				{name: "count_pages_in", desc: "Returns the number of pages of %s."},
				{name: "merge", desc: "Joins several files of kind %s into one."},
				{name: "split", desc: "Splits %s into one file per page or section."},
				{name: "compress", desc: "Reduces the file size of %s."},
				{name: "extract_images_from", desc: "Saves the embedded pictures of %s."},
				{name: "rotate_pages_of", desc: "Turns the pages of %s."},
			},
			objects: []object{{"pdf", "a PDF document"}, {"docx", "a Word document"}, {"epub", "an e-book"}, {"pptx", "a PowerPoint deck"}, {"odt", "an OpenDocument text"}},
			params:  []param{{"path", "the document"}},
		},
		{
			verbs: []verb{
				{name: "lint", desc: "Runs static checks on %s and lists problems."},
				{name: "format", desc: "Rewrites %s in the canonical style."},
				{name: "count_lines_of", desc: "Counts code, comment and blank lines of %s."},
				{name: "find_todos_in", desc: "Lists TODO and FIXME comments in %s."},
				{name: "list_functions_in", desc: "Lists the functions defined in %s with line numbers."},
			},
			objects: []object{{"go_code", "Go source"}, {"python_code", "Python source"}, {"javascript_code", "JavaScript source"}, {"rust_code", "Rust source"}, {"shell_script", "a shell script"}, {"sql_query", "SQL"}, {"java_code", "Java source"}, {"c_code", "C source"}, {"typescript_code", "TypeScript source"}, {"ruby_code", "Ruby source"}},
			params:  []param{{"path", "file or directory"}},
		},
		{
			verbs: []verb{
				{name: "create", desc: "Packs files into %s."},
				{name: "extract", desc: "Unpacks %s into a directory."},
				{name: "list_contents_of", desc: "Lists the entries of %s."},
				{name: "test", desc: "Checks the integrity of %s."},
			},
			objects: []object{{"zip_archive", "a .zip archive"}, {"tar_gz_archive", "a gzipped tarball"}, {"seven_zip_archive", "a .7z archive"}, {"rar_archive", "a RAR archive"}},
			params:  []param{{"path", "the archive"}},
		},
		{
			verbs: []verb{
				{name: "add", desc: "Puts %s in the calendar."},
				{name: "list", desc: "Shows upcoming entries of kind %s in the calendar."},
				{name: "cancel", desc: "Removes %s from the calendar."},
				{name: "move", desc: "Reschedules %s.", params: []param{{"to", "the new time"}}},
			},
			objects: []object{{"event", "an event"}, {"meeting", "a meeting with attendees"}, {"appointment", "an appointment (doctor, hairdresser)"}},
			params:  []param{{"what", "title and time"}},
		},
	}
}

func logFamily() family {
	return family{
		verbs: []verb{
			{name: "count_errors_in", desc: "Counts the lines at error level in %s."},
			{name: "tail", desc: "Returns the last N lines of %s."},
			{name: "search", desc: "Returns the lines of %s matching a pattern.", params: []param{{"pattern", "a regular expression"}}},
			{name: "summarize", desc: "Groups the entries of %s by message and counts them."},
		},
		objects: []object{
			{"nginx_log", "the nginx access and error logs"}, {"apache_log", "the Apache httpd logs"},
			{"syslog", "the system log (/var/log/syslog)"}, {"journald", "the systemd journal"},
			{"docker_logs", "a container's output"}, {"postgres_log", "the PostgreSQL server log"},
			{"auth_log", "the SSH and sudo authentication log"}, {"kernel_log", "the kernel ring buffer (dmesg)"},
		},
		params: []param{{"lines", "how many lines or since when"}},
	}
}

func languageTools() []toolSpec {
	var out []toolSpec
	for _, l := range []string{"english", "german", "french", "spanish", "italian", "portuguese", "dutch", "japanese", "chinese", "russian", "polish", "turkish"} {
		out = append(out, toolSpec{"translate_to_" + l, "Renders a text in " + strings.ToUpper(l[:1]) + l[1:] + ".", schema(param{"text", "the text in any language"})})
	}
	return out
}

func unitTools() []toolSpec {
	var out []toolSpec
	out = append(out, pairs("temperature", []object{{"celsius", "degrees Celsius (°C)"}, {"fahrenheit", "degrees Fahrenheit (°F)"}, {"kelvin", "kelvin (K)"}}, "")...)
	out = append(out, pairs("length", []object{{"meters", "metres"}, {"feet", "feet"}, {"inches", "inches"}, {"miles", "statute miles"}, {"kilometers", "kilometres"}, {"centimeters", "centimetres"}, {"yards", "yards"}}, "")...)
	out = append(out, pairs("mass", []object{{"kilograms", "kilograms"}, {"pounds", "pounds (lb)"}, {"ounces", "ounces"}, {"grams", "grams"}, {"stones", "stones"}}, "")...)
	out = append(out, pairs("volume", []object{{"liters", "litres"}, {"gallons", "US gallons"}, {"cups", "US cups"}, {"milliliters", "millilitres"}, {"tablespoons", "tablespoons"}}, "")...)
	out = append(out, pairs("speed", []object{{"kmh", "kilometres per hour"}, {"mph", "miles per hour"}, {"knots", "knots"}, {"mps", "metres per second"}}, "")...)
	out = append(out, pairs("amount of data", []object{{"bytes", "bytes"}, {"kilobytes", "kilobytes"}, {"megabytes", "megabytes"}, {"gigabytes", "gigabytes"}}, "")...)
	cur := []object{{"usd", "US dollars"}, {"eur", "euros"}, {"gbp", "British pounds sterling"}, {"jpy", "Japanese yen"}, {"chf", "Swiss francs"}, {"cad", "Canadian dollars"}, {"aud", "Australian dollars"}, {"cny", "Chinese yuan"}}
	out = append(out, pairs("sum of money", cur, " Uses the day's reference rate.")...)
	return out
}

func statsFamily() family {
	return family{
		verbs: []verb{{name: "%s", desc: "Computes the %s of a list of numbers."}},
		objects: []object{
			{"mean", "arithmetic mean"}, {"median", "middle value"}, {"mode", "most common value"},
			{"variance", "variance"}, {"std_dev", "standard deviation (spread)"}, {"range", "difference between largest and smallest value"},
			{"percentile", "given percentile"}, {"sum", "total"}, {"product", "product"}, {"geometric_mean", "geometric mean"},
		},
		params: []param{{"numbers", "the values, separated by spaces or commas"}},
		nameFn: func(_, o string) string { return o + "_of_numbers" },
	}
}

// corpus generates the 1,000 tools in a fixed order.
func corpus() []toolSpec {
	var all []toolSpec
	for _, f := range []family{textFamily(), tableFamily(), webFamily(), personalFamily(), encodingFamily(), hashFamily(), fileFamily(), logFamily(), statsFamily()} {
		all = append(all, f.tools()...)
	}
	all = append(all, unitTools()...)
	all = append(all, formatFamily()...)
	all = append(all, imageFamily()...)
	all = append(all, languageTools()...)
	for _, s := range singles {
		all = append(all, toolSpec{s.name, s.desc, schema(param{"input", "the input"})})
	}
	for _, f := range moreFamilies() { // last: the tail beyond 1,000 is cut
		all = append(all, f.tools()...)
	}
	return all
}

func TestCorpus(t *testing.T) {
	all := corpus()
	t.Logf("%d tools generated", len(all))
	seen := map[string]bool{}
	for _, s := range all {
		if seen[s.Name] {
			t.Errorf("duplicate tool %q", s.Name)
		}
		seen[s.Name] = true
	}
	if len(all) < 1000 {
		t.Fatalf("corpus has %d tools, want at least 1000", len(all))
	}
	all = all[:1000]
	lines := make([]string, len(all))
	for i, s := range all {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = string(b)
	}
	got := []byte("[\n" + strings.Join(lines, ",\n") + "\n]")
	path := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("%s is stale; run go test -run TestCorpus -update", path)
	}
}
