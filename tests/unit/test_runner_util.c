/* properties/runner/util.c: the XML escaper the JUnit reports use. The oracle is the XML 1.0 grammar written
 * out by hand per byte: markup as entities, control characters and bytes that are not UTF-8 as '?', valid
 * UTF-8 kept, newline and tab as character references in attributes only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/runner/util.h"
#include "tests/test_util.h"

static char *escaped(const char *s, pc_xml_mode mode)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return NULL;
    pc_xml_escape(f, s, mode);
    fclose(f);
    return buf;
}

static void expect(const char *in, pc_xml_mode mode, const char *want)
{
    char *got = escaped(in, mode);
    CHECK_MSG(got && strcmp(got, want) == 0, "mode %d: got '%s', want '%s'", (int)mode, got ? got : "(null)",
              want);
    free(got);
}

int main(void)
{
    expect("a<b>&\"c'", PC_XML_TEXT, "a&lt;b&gt;&amp;&quot;c&apos;");
    expect("line\nnext\tcol", PC_XML_TEXT, "line\nnext\tcol");
    expect("line\nnext\tcol", PC_XML_ATTRIBUTE, "line&#10;next&#9;col");
    /* control characters are not XML 1.0 characters, even as references */
    expect("x\x01y\x1fz", PC_XML_TEXT, "x?y?z");
    /* UTF-8 is kept; a lone continuation byte, a truncated sequence and 0xff are not UTF-8 */
    expect("caf\xc3\xa9", PC_XML_ATTRIBUTE, "caf\xc3\xa9");
    expect("a\x80z", PC_XML_TEXT, "a?z");
    expect("a\xc3", PC_XML_TEXT, "a?");
    expect("\xff\xfe", PC_XML_ATTRIBUTE, "??");
    expect(NULL, PC_XML_TEXT, "");
    return pc_test_finish("test_runner_util");
}
