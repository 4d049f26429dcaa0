// SPDX-License-Identifier: MIT
/*
 * jsonq: validate a JSON document and print values from it, for the
 * tools' tests here and inside the VM, where there is no python or jq.
 *
 *   jsonq FILE              exit 0 if FILE (- for stdin) is one valid
 *                           JSON value, 1 (with the reason) if not
 *   jsonq FILE PATH...      print each PATH's value on its own line:
 *                           strings unquoted, numbers as written, true,
 *                           false, null, or "object"/"array"; PATH# prints
 *                           the number of members; exit 1 if one is missing
 *
 * PATH: .key, [index], chained: .results[0].cuMemcpyHtoD.p50
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum type { T_OBJ, T_ARR, T_STR, T_NUM, T_TRUE, T_FALSE, T_NULL };

struct node {
	enum type type;
	const char *text;	/* strings: after the quote; else the value */
	size_t len;
	const char *key;	/* in an object: the key, after its quote */
	size_t keylen;
	int child, next;	/* -1: none */
	int count;
};

static struct node *nodes;
static int nnodes, cap;
static const char *doc, *pos, *err;

static int new_node(enum type t)
{
	if (nnodes == cap) {
		cap = cap ? cap * 2 : 1024;
		nodes = realloc(nodes, (size_t)cap * sizeof(*nodes));
		if (!nodes) {
			perror("jsonq");
			exit(2);
		}
	}
	memset(&nodes[nnodes], 0, sizeof(nodes[0]));
	nodes[nnodes].type = t;
	nodes[nnodes].child = nodes[nnodes].next = -1;
	return nnodes++;
}

static void ws(void)
{
	while (*pos == ' ' || *pos == '\t' || *pos == '\n' || *pos == '\r')
		pos++;
}

/* A string at pos (on its quote); its content's start and length. */
static int string(const char **s, size_t *len)
{
	pos++;
	*s = pos;
	while (*pos != '"') {
		if (!*pos || (unsigned char)*pos < 0x20) {
			err = "unterminated string or control character in it";
			return -1;
		}
		if (*pos == '\\') {
			pos++;
			if (*pos == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)pos[i])) {
						err = "bad \\u escape";
						return -1;
					}
				pos += 4;
			} else if (!strchr("\"\\/bfnrt", *pos) || !*pos) {
				err = "bad escape";
				return -1;
			}
		}
		pos++;
	}
	*len = (size_t)(pos - *s);
	pos++;
	return 0;
}

static int number(void)
{
	const char *p = pos;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	pos = p;
	return 0;
}

static int value(int depth);

/* Members of an object or array, after its opening bracket. */
static int members(int n, bool is_obj, int depth)
{
	int last = -1, c;
	const char *k = NULL;
	size_t kl = 0;

	ws();
	if (*pos == (is_obj ? '}' : ']')) {
		pos++;
		return 0;
	}
	for (;;) {
		ws();
		if (is_obj) {
			if (*pos != '"' || string(&k, &kl)) {
				err = err ? err : "expected a key";
				return -1;
			}
			ws();
			if (*pos++ != ':') {
				err = "expected ':'";
				return -1;
			}
		}
		c = value(depth + 1);
		if (c < 0)
			return -1;
		nodes[c].key = k;
		nodes[c].keylen = kl;
		if (last < 0)
			nodes[n].child = c;
		else
			nodes[last].next = c;
		last = c;
		nodes[n].count++;
		ws();
		if (*pos == ',') {
			pos++;
			continue;
		}
		if (*pos++ == (is_obj ? '}' : ']'))
			return 0;
		err = is_obj ? "expected ',' or '}'" : "expected ',' or ']'";
		return -1;
	}
}

static int value(int depth)
{
	int n;

	if (depth > 64) {
		err = "nested too deeply";
		return -1;
	}
	ws();
	switch (*pos) {
	case '{':
	case '[':
		n = new_node(*pos == '{' ? T_OBJ : T_ARR);
		nodes[n].text = pos++;
		return members(n, nodes[n].type == T_OBJ, depth) ? -1 : n;
	case '"':
		n = new_node(T_STR);
		return string(&nodes[n].text, &nodes[n].len) ? -1 : n;
	}
	if (!strncmp(pos, "true", 4) || !strncmp(pos, "null", 4) ||
	    !strncmp(pos, "false", 5)) {
		n = new_node(*pos == 't' ? T_TRUE : *pos == 'f' ? T_FALSE : T_NULL);
		nodes[n].text = pos;
		pos += *pos == 'f' ? 5 : 4;
		return n;
	}
	n = new_node(T_NUM);
	nodes[n].text = pos;
	if (number()) {
		err = "not a JSON value";
		return -1;
	}
	nodes[n].len = (size_t)(pos - nodes[n].text);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t n = 0, c = 65536, r;
	char *buf = malloc(c + 1);

	if (!f || !buf)
		return NULL;
	while ((r = fread(buf + n, 1, c - n, f)) > 0) {
		n += r;
		if (n == c) {
			c *= 2;
			buf = realloc(buf, c + 1);
			if (!buf)
				return NULL;
		}
	}
	buf[n] = 0;
	if (f != stdin)
		fclose(f);
	return buf;
}

/* The node at path from root, or -1; *want_count for a trailing '#'. */
static int lookup(int root, const char *path, int *want_count)
{
	const char *p = path;
	int n = root, c;
	size_t l;

	*want_count = 0;
	while (*p) {
		if (*p == '#' && !p[1]) {
			*want_count = 1;
			return n;
		}
		if (*p == '.') {
			p++;
			l = strcspn(p, ".[#");
			if (nodes[n].type != T_OBJ)
				return -1;
			for (c = nodes[n].child; c >= 0; c = nodes[c].next)
				if (nodes[c].keylen == l &&
				    !strncmp(nodes[c].key, p, l))
					break;
			p += l;
		} else if (*p == '[') {
			char *end;
			long i = strtol(p + 1, &end, 10);

			if (*end != ']' || nodes[n].type != T_ARR || i < 0)
				return -1;
			for (c = nodes[n].child; c >= 0 && i > 0; i--)
				c = nodes[c].next;
			p = end + 1;
		} else {
			return -1;
		}
		if (c < 0)
			return -1;
		n = c;
	}
	return n;
}

static void print(int n)
{
	const struct node *x = &nodes[n];

	switch (x->type) {
	case T_OBJ:
		puts("object");
		break;
	case T_ARR:
		puts("array");
		break;
	case T_TRUE:
		puts("true");
		break;
	case T_FALSE:
		puts("false");
		break;
	case T_NULL:
		puts("null");
		break;
	default:
		printf("%.*s\n", (int)x->len, x->text);
	}
}

int main(int argc, char **argv)
{
	int root, i, n, count, missing = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: jsonq FILE [PATH...]\n");
		return 2;
	}
	doc = slurp(argv[1]);
	if (!doc) {
		perror(argv[1]);
		return 2;
	}
	pos = doc;
	root = value(0);
	ws();
	if (root < 0 || *pos) {
		fprintf(stderr, "jsonq: %s: invalid JSON at byte %ld: %s\n",
			argv[1], (long)(pos - doc),
			root < 0 ? err : "text after the value");
		return 1;
	}
	for (i = 2; i < argc; i++) {
		n = lookup(root, argv[i], &count);
		if (n < 0) {
			fprintf(stderr, "jsonq: %s: no %s\n", argv[1], argv[i]);
			missing = 1;
			continue;
		}
		if (count)
			printf("%d\n", nodes[n].count);
		else
			print(n);
	}
	return missing;
}
