/// @file ply.hpp
/// @brief A small reader of ASCII PLY point clouds (the Stanford 3D Scanning
///        Repository's format): the x, y, z of every vertex as float3.
///
/// Reads the header (`ply`, `format ascii 1.0`, `comment`/`obj_info` lines,
/// `element <name> <count>`, `property <type> <name>`, `property list ...`,
/// `end_header`), then the vertex lines; other elements' lines before the
/// vertices are skipped, those after them are not read. Any other property
/// of a vertex (confidence, intensity, normals, colours) is read past.
/// Source: G. Turk, "The PLY Polygon File Format", Stanford, 1994
/// (http://paulbourke.net/dataformats/ply/).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <sstream>
#include <string>
#include <vector>

#include "cudalab/error.cuh"

namespace cudalab {

/// @brief Parses an ASCII PLY stream and returns the vertices' x, y, z.
/// @param in   the stream, positioned at the start of the file
/// @param name the file's name, for error messages
/// @return one float3 per vertex, in file order (empty when the file has no vertices)
/// @throws cudalab::ParseError (with the 1-based line) when the magic line,
///         the format (binary formats are not supported), the vertex element,
///         its x, y or z property, a number, or a vertex line is missing or
///         malformed, or when the file ends early.
/// Work O(file size).
inline std::vector<float3> parse_ply_points(std::istream& in, const std::string& name) {
  std::string line;
  long line_no = 0;
  auto next_line = [&](const char* what) {
    if (!std::getline(in, line)) throw ParseError(name, line_no, std::string("unexpected end of file: expected ") + what);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
  };
  next_line("the magic line 'ply'");
  if (line != "ply") throw ParseError(name, line_no, "not a PLY file: the first line must be 'ply'");
  struct Element {
    std::string name;
    std::size_t count = 0;
    std::size_t properties = 0;
    bool has_list = false;
    int xyz[3] = {-1, -1, -1};
  };
  std::vector<Element> elements;
  bool format_seen = false;
  for (;;) {
    next_line("'end_header'");
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "end_header") break;
    if (key.empty() || key == "comment" || key == "obj_info") continue;
    if (key == "format") {
      std::string kind, version;
      words >> kind >> version;
      if (kind != "ascii")
        throw ParseError(name, line_no, "format '" + kind + "' is not supported: only 'format ascii 1.0'");
      format_seen = true;
    } else if (key == "element") {
      Element e;
      long long count = -1;
      if (!(words >> e.name >> count) || count < 0)
        throw ParseError(name, line_no, "expected 'element <name> <count>' with a count >= 0");
      e.count = static_cast<std::size_t>(count);
      elements.push_back(e);
    } else if (key == "property") {
      if (elements.empty()) throw ParseError(name, line_no, "a property before any element");
      std::string type, prop;
      words >> type;
      Element& e = elements.back();
      if (type == "list") {
        e.has_list = true;
      } else {
        if (!(words >> prop)) throw ParseError(name, line_no, "expected 'property <type> <name>'");
        for (int a = 0; a < 3; ++a)
          if (prop == std::string(1, static_cast<char>('x' + a))) e.xyz[a] = static_cast<int>(e.properties);
      }
      ++e.properties;
    } else {
      throw ParseError(name, line_no, "unknown header keyword '" + key + "'");
    }
  }
  if (!format_seen) throw ParseError(name, line_no, "the header has no 'format ascii 1.0' line");
  std::size_t v = 0;
  while (v < elements.size() && elements[v].name != "vertex") ++v;
  if (v == elements.size()) throw ParseError(name, line_no, "the header declares no 'element vertex'");
  const Element& vertex = elements[v];
  if (vertex.has_list) throw ParseError(name, line_no, "list properties of vertices are not supported");
  for (int a = 0; a < 3; ++a)
    if (vertex.xyz[a] < 0)
      throw ParseError(name, line_no, std::string("the vertex element has no property '") +
                                          static_cast<char>('x' + a) + "'");
  for (std::size_t e = 0; e < v; ++e)
    for (std::size_t i = 0; i < elements[e].count; ++i) next_line("a line of an element before the vertices");
  std::vector<float3> points;
  points.reserve(vertex.count);
  for (std::size_t i = 0; i < vertex.count; ++i) {
    next_line("a vertex line");
    const char* p = line.c_str();
    float xyz[3] = {0.0f, 0.0f, 0.0f};
    for (std::size_t k = 0; k < vertex.properties; ++k) {
      char* end = nullptr;
      const float value = std::strtof(p, &end);
      if (end == p)
        throw ParseError(name, line_no, "vertex " + std::to_string(i) + ": expected " +
                                            std::to_string(vertex.properties) + " numbers, found " + std::to_string(k));
      for (int a = 0; a < 3; ++a)
        if (vertex.xyz[a] == static_cast<int>(k)) xyz[a] = value;
      p = end;
    }
    while (*p == ' ' || *p == '\t') ++p;
    if (*p != '\0')
      throw ParseError(name, line_no, "vertex " + std::to_string(i) + ": unexpected text after " +
                                          std::to_string(vertex.properties) + " numbers: '" + p + "'");
    points.push_back({xyz[0], xyz[1], xyz[2]});
  }
  return points;
}

/// @brief Reads the ASCII PLY file at `path` (see parse_ply_points).
/// @param path the file to read
/// @return one float3 per vertex, in file order
/// @throws cudalab::ParseError when the file cannot be opened (line 0) or is malformed.
/// Work O(file size).
inline std::vector<float3> read_ply_points(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, "cannot open the file");
  return parse_ply_points(in, path);
}

}  // namespace cudalab
