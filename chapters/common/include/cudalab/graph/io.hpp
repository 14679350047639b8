/// @file io.hpp
/// @brief Graph files: DIMACS shortest-path graphs (`.gr`) and coordinates
///        (`.co`), Matrix Market coordinate matrices (`.mtx`), and the
///        lookup of real data sets in `CUDALAB_DATA_DIR`.
///
/// Every loader reads the whole file, checks every line, and throws
/// cudalab::ParseError naming the file and the 1-based line of the first
/// malformed line (line 0 when the file as a whole is wrong: unreadable,
/// fewer arcs than declared). Files are plain text; decompress `.gz`
/// downloads first (`tools/fetch-data` does).
///
/// Formats: "9th DIMACS Implementation Challenge - Shortest Paths", file
/// formats page, http://www.diag.uniroma1.it/challenge9/format.shtml; Boisvert,
/// Pozo and Remington, "The Matrix Market exchange formats: initial design",
/// NIST IR 5935, 1996.
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cudalab/error.cuh"
#include "cudalab/graph/csr.hpp"

namespace cudalab::graph {

namespace detail {

/// Reads a whole file into a string; ParseError(line 0) when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, "cannot open the file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ParseError(path, 0, "read error");
  return std::move(ss).str();
}

/// Splits a buffer into lines and lines into blank-separated tokens.
class Lines {
 public:
  Lines(const std::string& path, std::string_view text) : path_(path), text_(text) {}
  /// Advances to the next line; false at the end of the text.
  bool next() {
    if (pos_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line_ = text_.substr(pos_, end - pos_);
    if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    tok_ = 0;
    return true;
  }
  std::string_view line() const { return line_; }
  long number() const { return number_; }
  /// The next token of the line, or an empty view at its end.
  std::string_view token() {
    while (tok_ < line_.size() && (line_[tok_] == ' ' || line_[tok_] == '\t')) ++tok_;
    const std::size_t start = tok_;
    while (tok_ < line_.size() && line_[tok_] != ' ' && line_[tok_] != '\t') ++tok_;
    return line_.substr(start, tok_ - start);
  }
  /// The next token as an integer in [lo, hi], else ParseError naming `what`.
  long long integer(const char* what, long long lo, long long hi) {
    const std::string_view t = token();
    if (t.empty()) fail(std::string("missing ") + what);
    long long v = 0;
    const char* first = t.data();
    if (*first == '+') ++first;
    const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == t.data() + t.size() && (v < lo || v > hi)))
      fail(std::string(what) + " '" + std::string(t) + "' is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
    if (ec != std::errc() || ptr != t.data() + t.size())
      fail(std::string(what) + " '" + std::string(t) + "' is not an integer");
    return v;
  }
  /// The next token as a finite floating-point number, else ParseError.
  double real(const char* what) {
    const std::string t(token());
    if (t.empty()) fail(std::string("missing ") + what);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size() || !std::isfinite(v))
      fail(std::string(what) + " '" + t + "' is not a finite number");
    return v;
  }
  /// ParseError when the line has tokens left.
  void expect_end() {
    const std::string_view t = token();
    if (!t.empty()) fail("unexpected '" + std::string(t) + "' at the end of the line");
  }
  /// Throws ParseError at the current line.
  [[noreturn]] void fail(const std::string& message) const { throw ParseError(path_, number_, message); }

 private:
  std::string path_;
  std::string_view text_;
  std::string_view line_;
  std::size_t pos_ = 0;
  std::size_t tok_ = 0;
  long number_ = 0;
};

}  // namespace detail

/// @brief Parses a DIMACS shortest-path graph from `text` (the content of
///        the file `path`, which is used in messages only).
///
/// Format: lines `c ...` (comments) and blank lines anywhere; one problem
/// line `p sp N M` before the first arc; then exactly M arc lines `a U V W`
/// with 1-based ends U, V in [1, N] and an integer length W that fits
/// weight_t. Vertex ids become 0-based; arcs keep their file order per tail;
/// self loops and parallel arcs are kept.
/// @throws cudalab::ParseError (file, line) on: a line of another type, a
///         missing or repeated problem line, a problem other than `sp`, an
///         arc before the problem line, a malformed or out-of-range field,
///         extra fields, or an arc count different from M (line 0).
/// Work O(size of the text + N + M).
inline Csr parse_dimacs_gr(const std::string& path, std::string_view text) {
  detail::Lines in(path, text);
  std::optional<std::size_t> n;
  std::size_t declared = 0;
  long problem_line = 0;
  std::vector<Edge> edges;
  while (in.next()) {
    const std::string_view kind = in.token();
    if (kind.empty() || kind == "c") continue;
    if (kind == "p") {
      if (n) in.fail("a second problem line (the first is line " + std::to_string(problem_line) + ")");
      if (in.token() != "sp") in.fail("problem line is not 'p sp N M': not a DIMACS shortest-path graph");
      n = static_cast<std::size_t>(in.integer("vertex count N", 0, static_cast<long long>(kMaxVertices)));
      declared = static_cast<std::size_t>(in.integer("arc count M", 0, static_cast<long long>(kMaxEdges)));
      in.expect_end();
      problem_line = in.number();
      edges.reserve(declared);
    } else if (kind == "a") {
      if (!n) in.fail("arc line before the problem line 'p sp N M'");
      if (edges.size() == declared)
        in.fail("more arcs than the " + std::to_string(declared) + " declared on line " + std::to_string(problem_line));
      const auto top = static_cast<long long>(*n);
      const auto u = in.integer("tail U", 1, top);
      const auto v = in.integer("head V", 1, top);
      const auto w = in.integer("length W", std::numeric_limits<weight_t>::min(), std::numeric_limits<weight_t>::max());
      in.expect_end();
      edges.push_back(Edge{static_cast<vertex_t>(u - 1), static_cast<vertex_t>(v - 1), static_cast<weight_t>(w)});
    } else {
      in.fail("line starts with '" + std::string(kind) + "', not c, p or a: not a DIMACS shortest-path graph");
    }
  }
  if (!n) throw ParseError(path, 0, "no problem line 'p sp N M': not a DIMACS shortest-path graph");
  if (edges.size() != declared)
    throw ParseError(path, 0, "declares " + std::to_string(declared) + " arcs (line " + std::to_string(problem_line) +
                                  ") but has " + std::to_string(edges.size()));
  return csr_from_edges(*n, edges);
}

/// @brief Loads a DIMACS shortest-path graph file (`.gr`); see parse_dimacs_gr.
/// @throws cudalab::ParseError when the file cannot be read or is malformed.
/// Work O(file size + N + M); the NY road graph (264,346 vertices, 733,846
/// arcs, 11 MB) loads in well under a second.
inline Csr load_dimacs_gr(const std::string& path) { return parse_dimacs_gr(path, detail::read_file(path)); }

/// @brief A point of a DIMACS coordinate file: longitude and latitude in
///        millionths of a degree, as integers.
struct Coordinate {
  std::int64_t x = 0;  ///< longitude × 10^6
  std::int64_t y = 0;  ///< latitude × 10^6
};

/// @brief Parses a DIMACS coordinate file from `text` (the content of `path`).
///
/// Format: comments `c ...`, one line `p aux sp co N`, then N lines
/// `v ID X Y` with ID in [1, N], each ID exactly once.
/// @return N coordinates, element i for vertex i (0-based).
/// @throws cudalab::ParseError on a malformed line, a repeated ID, or a
///         missing ID (line 0).
/// Work O(size of the text + N).
inline std::vector<Coordinate> parse_dimacs_co(const std::string& path, std::string_view text) {
  detail::Lines in(path, text);
  std::optional<std::size_t> n;
  std::vector<Coordinate> out;
  std::vector<char> seen;
  std::size_t count = 0;
  while (in.next()) {
    const std::string_view kind = in.token();
    if (kind.empty() || kind == "c") continue;
    if (kind == "p") {
      if (n) in.fail("a second problem line");
      if (in.token() != "aux" || in.token() != "sp" || in.token() != "co")
        in.fail("problem line is not 'p aux sp co N': not a DIMACS coordinate file");
      n = static_cast<std::size_t>(in.integer("vertex count N", 0, static_cast<long long>(kMaxVertices)));
      in.expect_end();
      out.assign(*n, Coordinate{});
      seen.assign(*n, 0);
    } else if (kind == "v") {
      if (!n) in.fail("vertex line before the problem line 'p aux sp co N'");
      const auto id = in.integer("vertex ID", 1, static_cast<long long>(*n));
      const auto x = in.integer("X", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
      const auto y = in.integer("Y", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
      in.expect_end();
      const auto i = static_cast<std::size_t>(id - 1);
      if (seen[i]) in.fail("vertex " + std::to_string(id) + " is given twice");
      seen[i] = 1;
      ++count;
      out[i] = Coordinate{x, y};
    } else {
      in.fail("line starts with '" + std::string(kind) + "', not c, p or v: not a DIMACS coordinate file");
    }
  }
  if (!n) throw ParseError(path, 0, "no problem line 'p aux sp co N': not a DIMACS coordinate file");
  if (count != *n)
    throw ParseError(path, 0, "declares " + std::to_string(*n) + " vertices but gives " + std::to_string(count));
  return out;
}

/// @brief Loads a DIMACS coordinate file (`.co`); see parse_dimacs_co.
/// @throws cudalab::ParseError when the file cannot be read or is malformed.
inline std::vector<Coordinate> load_dimacs_co(const std::string& path) {
  return parse_dimacs_co(path, detail::read_file(path));
}

/// @brief Parses a Matrix Market coordinate matrix from `text` (the content
///        of `path`) as a graph: entry (i, j, v) is the edge `i-1 -> j-1`.
///
/// Header `%%MatrixMarket matrix coordinate F S` with field F one of
/// `pattern` (every weight 1), `integer` (the value, which must fit
/// weight_t) or `real` (the value rounded to the nearest integer, which must
/// fit weight_t: scale fractional data before loading), and symmetry S one of
/// `general` or `symmetric` (each off-diagonal entry also gives the edge
/// `j-1 -> i-1`). Then `%` comment lines (and blank lines), the size line
/// `R C NNZ` with R = C, and NNZ entry lines `I J [V]` with 1-based I, J in
/// [1, R]. The header words after `%%MatrixMarket` are case-insensitive.
///
/// What becomes of particular entries:
/// - a symmetric file stores the lower triangle only (I ≥ J), as the format
///   requires; an entry above the diagonal is an error, since the reader
///   would otherwise double that edge;
/// - a diagonal entry (I = J, a self loop) gives one edge `i-1 -> i-1`, also
///   in a symmetric file (it is not mirrored);
/// - a repeated entry is kept: it gives parallel edges (shortest paths take
///   the lighter one; the format's "add duplicates" reading of a matrix is
///   not applied);
/// - edges keep the file's order within each tail (csr_from_edges), the
///   mirrored edge `j-1 -> i-1` right after `i-1 -> j-1` in the edge list.
///
/// The parse is all or nothing: it returns a new graph or throws, so a
/// caller's graph is never half-replaced.
/// @throws cudalab::ParseError (file, 1-based line) on: a missing or
///         unsupported header (not `%%MatrixMarket matrix coordinate`, array
///         format, complex, hermitian, skew-symmetric), a missing size line
///         (line 0), a non-square size, a malformed, non-numeric or
///         out-of-range field, a missing or extra field (a file cut in the
///         middle of a line), an entry above the diagonal of a symmetric
///         file, more entries than NNZ, or fewer (line 0: a truncated file).
/// Work O(size of the text + R + NNZ).
inline Csr parse_matrix_market(const std::string& path, std::string_view text) {
  detail::Lines in(path, text);
  if (!in.next() || in.token() != "%%MatrixMarket")
    throw ParseError(path, 1, "missing header '%%MatrixMarket matrix coordinate ...': not a Matrix Market file");
  auto lower = [](std::string_view t) {
    std::string s(t);
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (lower(in.token()) != "matrix") in.fail("only 'matrix' objects are supported");
  if (lower(in.token()) != "coordinate") in.fail("only the 'coordinate' format is supported (not 'array')");
  const std::string field = lower(in.token());
  if (field != "pattern" && field != "integer" && field != "real")
    in.fail("field '" + field + "' is not supported (pattern, integer or real)");
  const std::string symmetry = lower(in.token());
  if (symmetry != "general" && symmetry != "symmetric")
    in.fail("symmetry '" + symmetry + "' is not supported (general or symmetric)");
  in.expect_end();
  std::optional<std::size_t> n;
  std::size_t declared = 0, count = 0;
  long size_line = 0;
  std::vector<Edge> edges;
  while (in.next()) {
    if (!in.line().empty() && in.line().front() == '%') continue;
    if (in.line().find_first_not_of(" \t") == std::string_view::npos) continue;  // blank lines are allowed
    if (!n) {
      const auto rows = in.integer("row count", 0, static_cast<long long>(kMaxVertices));
      const auto cols = in.integer("column count", 0, static_cast<long long>(kMaxVertices));
      declared = static_cast<std::size_t>(in.integer("entry count", 0, static_cast<long long>(kMaxEdges)));
      in.expect_end();
      if (rows != cols)
        in.fail("the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", not square: not a graph");
      n = static_cast<std::size_t>(rows);
      size_line = in.number();
      edges.reserve(symmetry == "symmetric" ? 2 * declared : declared);
      continue;
    }
    if (count == declared)
      in.fail("more entries than the " + std::to_string(declared) + " declared on line " + std::to_string(size_line));
    const auto top = static_cast<long long>(*n);
    const auto i = in.integer("row index", 1, top);
    const auto j = in.integer("column index", 1, top);
    if (symmetry == "symmetric" && i < j)
      in.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) +
              ") is above the diagonal: a symmetric file stores the lower triangle only (row >= column)");
    weight_t w = 1;
    if (field == "integer") {
      w = static_cast<weight_t>(
          in.integer("value", std::numeric_limits<weight_t>::min(), std::numeric_limits<weight_t>::max()));
    } else if (field == "real") {
      const double r = std::nearbyint(in.real("value"));
      if (r < static_cast<double>(std::numeric_limits<weight_t>::min()) ||
          r > static_cast<double>(std::numeric_limits<weight_t>::max()))
        in.fail("value " + std::to_string(r) + " does not fit a 32-bit integer weight");
      w = static_cast<weight_t>(r);
    }
    in.expect_end();
    ++count;
    edges.push_back(Edge{static_cast<vertex_t>(i - 1), static_cast<vertex_t>(j - 1), w});
    if (symmetry == "symmetric" && i != j)
      edges.push_back(Edge{static_cast<vertex_t>(j - 1), static_cast<vertex_t>(i - 1), w});
  }
  if (!n) throw ParseError(path, 0, "no size line 'R C NNZ'");
  if (count != declared)
    throw ParseError(path, 0, "declares " + std::to_string(declared) + " entries (line " + std::to_string(size_line) +
                                  ") but has " + std::to_string(count));
  if (edges.size() > kMaxEdges) throw ParseError(path, 0, "too many edges for a 32-bit offset");
  return csr_from_edges(*n, edges);
}

/// @brief Loads a Matrix Market file (`.mtx`) as a graph; see parse_matrix_market.
/// @throws cudalab::ParseError when the file cannot be read or is malformed.
inline Csr load_matrix_market(const std::string& path) {
  return parse_matrix_market(path, detail::read_file(path));
}

/// @brief Loads a graph by its extension: `.gr` (DIMACS) or `.mtx` (Matrix Market).
/// @throws cudalab::ParseError when the extension is neither, or the file is malformed.
inline Csr load_graph(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".gr")) return load_dimacs_gr(path);
  if (ends_with(".mtx")) return load_matrix_market(path);
  throw ParseError(path, 0, "unknown graph format (expected a .gr or .mtx file; decompress .gz first)");
}

/// @brief The path of the data file `name` in `CUDALAB_DATA_DIR`, if that
///        variable is set and the file exists there.
/// @return the path, or an empty optional (tests then skip and name the file;
///         `tools/fetch-data` downloads it).
inline std::optional<std::string> find_data_file(const std::string& name) {
  const char* dir = std::getenv("CUDALAB_DATA_DIR");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  const std::string path = std::string(dir) + "/" + name;
  std::ifstream probe(path);
  if (!probe) return std::nullopt;
  return path;
}

}  // namespace cudalab::graph
