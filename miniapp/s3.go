package miniapp

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/littlebitlabs/minimal/fault"
)

// The environment variables of the snapshot upload (mini-app-mcp's names).
const (
	EnvS3Endpoint           = "MINI_APP_S3_ENDPOINT"
	EnvS3Bucket             = "MINI_APP_S3_BUCKET"
	EnvS3AccessKeyID        = "MINI_APP_S3_ACCESS_KEY_ID"
	EnvS3SecretAccessKey    = "MINI_APP_S3_SECRET_ACCESS_KEY"
	EnvS3Prefix             = "MINI_APP_S3_PREFIX"
	EnvS3Region             = "MINI_APP_S3_REGION"
	EnvS3VirtualHostedStyle = "MINI_APP_S3_VIRTUAL_HOSTED_STYLE"
	EnvS3Checksum           = "MINI_APP_S3_CHECKSUM"
)

// DefaultS3Prefix is the object key prefix when MINI_APP_S3_PREFIX is unset.
const DefaultS3Prefix = "mini-app-snapshots/"

// S3Config is the resolved upload destination of data_snapshot.
type S3Config struct {
	Endpoint, Bucket, AccessKeyID, SecretAccessKey string
	Prefix, Region                                 string
	VirtualHosted, ChecksumSHA256                  bool
}

func uploadNotConfigured(msg string) *Error {
	return newErr(fault.Invalid, "UPLOAD_NOT_CONFIGURED", nil, "upload not configured: %s", msg)
}

func uploadFailed(msg string) *Error {
	return newErr(fault.Unavailable, "UPLOAD_FAILED", nil, "upload failed: %s", msg)
}

// S3ConfigFrom reads the upload configuration through getenv. Empty values
// count as missing; every missing required variable is named in the
// UPLOAD_NOT_CONFIGURED error.
func S3ConfigFrom(getenv func(string) string) (*S3Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := &S3Config{Endpoint: get(EnvS3Endpoint), Bucket: get(EnvS3Bucket), AccessKeyID: get(EnvS3AccessKeyID),
		SecretAccessKey: get(EnvS3SecretAccessKey), Prefix: get(EnvS3Prefix), Region: get(EnvS3Region)}
	var missing []string
	for _, kv := range [][2]string{{EnvS3Endpoint, c.Endpoint}, {EnvS3Bucket, c.Bucket}, {EnvS3AccessKeyID, c.AccessKeyID}, {EnvS3SecretAccessKey, c.SecretAccessKey}} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		return nil, uploadNotConfigured("missing env: " + strings.Join(missing, ", "))
	}
	switch v := get(EnvS3VirtualHostedStyle); {
	case v == "" || strings.EqualFold(v, "false") || v == "0":
	case strings.EqualFold(v, "true") || v == "1":
		c.VirtualHosted = true
	default:
		return nil, uploadNotConfigured(fmt.Sprintf("%s must be true/false, got '%s'", EnvS3VirtualHostedStyle, v))
	}
	switch v := get(EnvS3Checksum); {
	case v == "" || strings.EqualFold(v, "none"):
	case strings.EqualFold(v, "sha256"):
		c.ChecksumSHA256 = true
	default:
		return nil, uploadNotConfigured(fmt.Sprintf("%s must be none/sha256, got '%s'", EnvS3Checksum, v))
	}
	if c.Prefix == "" {
		c.Prefix = DefaultS3Prefix
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, uploadNotConfigured(fmt.Sprintf("%s must be an http(s) URL, got '%s'", EnvS3Endpoint, c.Endpoint))
	}
	if c.Region == "" {
		c.Region = regionOf(u.Hostname())
	}
	return c, nil
}

// regionOf derives the signing region of an s3.<region>.<domain> host
// (B2, AWS regional); other hosts sign with us-east-1.
func regionOf(host string) string {
	labels := strings.Split(host, ".")
	if len(labels) >= 4 && labels[0] == "s3" && labels[1] != "" {
		return labels[1]
	}
	return "us-east-1"
}

// keyFor joins the prefix and a file name with exactly one slash.
func (c *S3Config) keyFor(name string) string {
	p := strings.TrimRight(c.Prefix, "/")
	if p == "" {
		return name
	}
	return p + "/" + name
}

// upload puts one local file as a single PutObject and returns its size.
func (c *S3Config) upload(ctx context.Context, path, key string) (int64, error) {
	u, _ := url.Parse(c.Endpoint) // checked by S3ConfigFrom
	lookup := minio.BucketLookupPath
	if c.VirtualHosted {
		lookup = minio.BucketLookupDNS
	}
	cl, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, ""),
		Secure: u.Scheme == "https", Region: c.Region, BucketLookup: lookup})
	if err != nil {
		return 0, uploadFailed("cannot build s3 client: " + err.Error())
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, uploadFailed("cannot read snapshot file: " + err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, uploadFailed("cannot read snapshot file: " + err.Error())
	}
	opts := minio.PutObjectOptions{ContentType: "application/vnd.sqlite3", DisableMultipart: true}
	if c.ChecksumSHA256 {
		opts.Checksum = minio.ChecksumSHA256
	}
	if _, err := cl.PutObject(ctx, c.Bucket, key, f, fi.Size(), opts); err != nil {
		return 0, uploadFailed(fmt.Sprintf("put '%s' failed: %s", key, err))
	}
	return fi.Size(), nil
}

// envOf is the environment of the mini-app face: the process's, and in
// the drop-in mode also ./.mini-app-mcp.env (a variable already set wins),
// as mini-app-mcp reads it.
func (s *Service) envOf() func(string) string {
	if !s.cfg.Mounted {
		return os.Getenv
	}
	file := map[string]string{}
	if cwd, err := os.Getwd(); err == nil {
		if f, err := os.Open(filepath.Join(cwd, EnvFile)); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
				k, v, ok := strings.Cut(line, "=")
				if !ok || strings.HasPrefix(line, "#") {
					continue
				}
				v = strings.TrimSpace(v)
				if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
					v = v[1 : len(v)-1]
				}
				file[strings.TrimSpace(k)] = v
			}
			f.Close()
		}
	}
	return func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return file[k]
	}
}
