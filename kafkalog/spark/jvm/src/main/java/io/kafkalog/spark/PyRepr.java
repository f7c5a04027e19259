package io.kafkalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * Python's {@code repr()} of strings and JSON values, so option errors read exactly as the
 * Python source's ({@code "option assign: expected a list ... found '0'"}).
 */
final class PyRepr {
  private PyRepr() {}

  static String str(String s) {
    if (s == null) {
      return "None";
    }
    char q = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
    StringBuilder b = new StringBuilder(s.length() + 2).append(q);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == q || c == '\\') {
        b.append('\\').append(c);
      } else if (c == '\n') {
        b.append("\\n");
      } else if (c == '\r') {
        b.append("\\r");
      } else if (c == '\t') {
        b.append("\\t");
      } else if (c < 0x20 || c == 0x7f) {
        b.append(String.format("\\x%02x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append(q).toString();
  }

  static String json(JsonNode n) {
    if (n == null || n.isNull()) {
      return "None";
    }
    if (n.isTextual()) {
      return str(n.asText());
    }
    if (n.isBoolean()) {
      return n.asBoolean() ? "True" : "False";
    }
    if (n.isArray()) {
      StringBuilder b = new StringBuilder("[");
      for (int i = 0; i < n.size(); i++) {
        b.append(i == 0 ? "" : ", ").append(json(n.get(i)));
      }
      return b.append(']').toString();
    }
    if (n.isObject()) {
      StringBuilder b = new StringBuilder("{");
      Iterator<Map.Entry<String, JsonNode>> it = n.properties().iterator();
      boolean first = true;
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        b.append(first ? "" : ", ").append(str(e.getKey())).append(": ").append(json(e.getValue()));
        first = false;
      }
      return b.append('}').toString();
    }
    return n.asText();
  }
}
