// The HTML report in a real browser: headless Chromium (Debian package, installed by
// scripts/setup.sh) renders a representative audit report to PNG, and the pixels show a page a
// person can read: text drawn with real fonts, the SVG chart's coloured lines, and nothing cut
// off at the right edge. The PNG is decoded here (zlib inflate + the five PNG row filters).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "experiments/report_html.h"
#include "tools/report_fixture.h"

namespace privsearch::tools {
namespace {

namespace fs = std::filesystem;

struct Image {
  std::size_t width = 0, height = 0, channels = 0;
  std::vector<std::uint8_t> pixels;  // row-major, `channels` bytes per pixel
  const std::uint8_t* at(std::size_t x, std::size_t y) const {
    return pixels.data() + (y * width + x) * channels;
  }
};

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

// 8-bit RGB or RGBA, non-interlaced (what Chromium writes); anything else fails the test.
Image decode_png(const std::vector<std::uint8_t>& file) {
  Image img;
  static const std::array<std::uint8_t, 8> sig = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  EXPECT_TRUE(file.size() > 8 && std::equal(sig.begin(), sig.end(), file.begin()));
  std::vector<std::uint8_t> idat;
  for (std::size_t pos = 8; pos + 12 <= file.size();) {
    const std::uint32_t len = be32(&file[pos]);
    const std::string type(reinterpret_cast<const char*>(&file[pos + 4]), 4);
    const std::uint8_t* data = &file[pos + 8];
    if (pos + 12 + len > file.size()) break;
    if (type == "IHDR") {
      img.width = be32(data);
      img.height = be32(data + 4);
      EXPECT_EQ(data[8], 8) << "bit depth";
      EXPECT_TRUE(data[9] == 2 || data[9] == 6) << "colour type " << int{data[9]};
      EXPECT_EQ(data[12], 0) << "interlaced";
      img.channels = data[9] == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    }
    pos += 12 + len;
  }
  const std::size_t stride = img.width * img.channels;
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  EXPECT_EQ(uncompress(raw.data(), &raw_len, idat.data(), idat.size()), Z_OK);
  EXPECT_EQ(raw_len, raw.size());
  img.pixels.assign(stride * img.height, 0);
  for (std::size_t y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* in = &raw[y * (stride + 1) + 1];
    std::uint8_t* out = &img.pixels[y * stride];
    const std::uint8_t* up = y > 0 ? out - stride : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= img.channels ? out[i - img.channels] : 0;
      const int b = up ? up[i] : 0;
      const int c = (up && i >= img.channels) ? up[i - img.channels] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4:
          pred = paeth(a, b, c);
          break;
        default:
          ADD_FAILURE() << "PNG filter " << int{filter};
          return img;
      }
      out[i] = static_cast<std::uint8_t>(in[i] + pred);
    }
  }
  return img;
}

std::string find_browser() {
  for (const char* name : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (fs::exists(name)) return name;
  }
  return "";
}

TEST(ReportScreenshot, AuditReportIsReadableInChromium) {
  const std::string browser = find_browser();
  ASSERT_FALSE(browser.empty()) << "chromium is not installed: run scripts/setup.sh";
  const fs::path dir =
      fs::temp_directory_path() / ("privsearch-shot-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path html = dir / "audit.html", png = dir / "audit.png", log = dir / "chromium.log";
  ASSERT_TRUE(write_report_html(html, testing_support::audit_report()).ok());
  constexpr std::size_t kWidth = 1000, kHeight = 1400;
  const std::string cmd = "timeout 120 " + browser +
                          " --headless=new --no-sandbox --disable-gpu --hide-scrollbars"
                          " --user-data-dir=" +
                          (dir / "profile").string() + " --window-size=" + std::to_string(kWidth) +
                          "," + std::to_string(kHeight) + " --screenshot=" + png.string() +
                          " file://" + html.string() + " > " + log.string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "chromium failed; see " << log;
  std::ifstream in(png, std::ios::binary);
  const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  const Image img = decode_png(file);
  ASSERT_EQ(img.width, kWidth);
  ASSERT_EQ(img.height, kHeight);

  std::size_t dark = 0, coloured = 0, dark_rows = 0;
  std::size_t rightmost = 0, leftmost = img.width;
  for (std::size_t y = 0; y < img.height; ++y) {
    bool row_dark = false;
    for (std::size_t x = 0; x < img.width; ++x) {
      const auto* p = img.at(x, y);
      const int lo = std::min({p[0], p[1], p[2]}), hi = std::max({p[0], p[1], p[2]});
      if (hi < 110) {
        ++dark;
        row_dark = true;
      }
      if (hi - lo > 90) ++coloured;
      if (hi < 235) {
        rightmost = std::max(rightmost, x);
        leftmost = std::min(leftmost, x);
      }
    }
    dark_rows += row_dark;
  }
  const double total = static_cast<double>(img.width * img.height);
  std::printf("dark %.2f%%, coloured pixels %zu, rows with text %zu, ink x in [%zu, %zu]\n",
              100.0 * static_cast<double>(dark) / total, coloured, dark_rows, leftmost, rightmost);
  // Text was drawn (a page of tables is a few percent dark ink), on many separate lines.
  EXPECT_GT(static_cast<double>(dark) / total, 0.01);
  EXPECT_GT(dark_rows, img.height / 4);
  // The chart's coloured series lines and markers are on the page.
  EXPECT_GT(coloured, 500u);
  // Nothing runs into either edge: the layout fits a 1000-pixel window with a margin.
  EXPECT_LT(rightmost, img.width - 12);
  EXPECT_GT(leftmost, 12u);
  // PRIVSEARCH_KEEP_SCREENSHOT=FILE keeps the PNG for a person to look at.
  if (const char* keep = std::getenv("PRIVSEARCH_KEEP_SCREENSHOT")) {
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace privsearch::tools
