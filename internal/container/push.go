package container

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/client"
)

// Push tags image (an ID or a tag) as ref (registry/name:tag) and pushes it there through the
// engine, with the credentials `docker login` stored for that registry in plain form
// (~/.docker/config.json's auths; a credential helper's are not read): none, anonymously.
func (d *Docker) Push(ctx context.Context, image, ref string) error {
	if _, err := d.c.ImageTag(ctx, client.ImageTagOptions{Source: image, Target: ref}); err != nil {
		return fmt.Errorf("tagging %s as %s: %w", image, ref, err)
	}
	auth, err := registryAuth(ref, dockerConfig())
	if err != nil {
		return err
	}
	resp, err := d.c.ImagePush(ctx, ref, client.ImagePushOptions{RegistryAuth: auth})
	if err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	for msg, err := range resp.JSONMessages(ctx) {
		if err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		if msg.Error != nil {
			return fmt.Errorf("pushing %s: %s", ref, msg.Error.Message)
		}
	}
	return nil
}

// dockerConfig is the docker client's config file: $DOCKER_CONFIG/config.json, else
// ~/.docker/config.json.
func dockerConfig() string {
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		return filepath.Join(dir, "config.json")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".docker", "config.json")
}

// registryAuth is the X-Registry-Auth value for ref's registry from the docker config file:
// its stored user and password, or anonymous ("{}") when it stores none.
func registryAuth(ref, configFile string) (string, error) {
	anonymous := base64.URLEncoding.EncodeToString([]byte("{}"))
	host, _, _ := strings.Cut(ref, "/")
	b, err := os.ReadFile(configFile)
	if os.IsNotExist(err) {
		return anonymous, nil
	}
	if err != nil {
		return "", err
	}
	var cfg struct {
		Auths map[string]struct{ Auth string }
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", configFile, err)
	}
	stored, ok := cfg.Auths[host]
	if !ok {
		stored, ok = cfg.Auths["https://"+host]
	}
	if !ok || stored.Auth == "" {
		return anonymous, nil
	}
	pair, err := base64.StdEncoding.DecodeString(stored.Auth)
	if err != nil {
		return "", fmt.Errorf("%s: the credentials of %s: %w", configFile, host, err)
	}
	user, password, _ := strings.Cut(string(pair), ":")
	j, _ := json.Marshal(map[string]string{"username": user, "password": password, "serveraddress": host})
	return base64.URLEncoding.EncodeToString(j), nil
}
