import { Button, Layout, Menu, Space, Tag, Typography } from 'antd';
import { DashboardOutlined, BookOutlined, AlertOutlined, SyncOutlined, LogoutOutlined, TranslationOutlined, IdcardOutlined, MailOutlined, FieldTimeOutlined, RadarChartOutlined } from '@ant-design/icons';
import { Outlet, useLocation, useNavigate } from 'react-router-dom';
import { useAuth } from '../auth';
import type { Key } from '../i18n/dict';
import { useI18n } from '../i18n/I18nProvider';

export function AppLayout() {
  const { t, toggle } = useI18n();
  const { session, signOut, can } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const me = session!.me;

  const items = [
    { key: '/', icon: <DashboardOutlined />, label: t('nav.overview') },
    { key: '/works', icon: <BookOutlined />, label: t('nav.works') },
    { key: '/matches', icon: <AlertOutlined />, label: t('nav.matches') },
    { key: '/notices', icon: <MailOutlined />, label: t('nav.notices') },
    { key: '/removals', icon: <FieldTimeOutlined />, label: t('nav.removals') },
    { key: '/watched', icon: <RadarChartOutlined />, label: t('nav.watched') },
    { key: '/holders', icon: <IdcardOutlined />, label: t('nav.holders') },
    ...(can('tasks.read') ? [{ key: '/tasks', icon: <SyncOutlined />, label: t('nav.tasks') }] : []),
  ];
  const selected = items
    .map((i) => i.key)
    .filter((k) => (k === '/' ? location.pathname === '/' : location.pathname.startsWith(k)));

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <Layout.Sider breakpoint="lg" collapsedWidth={0} width={200}>
        <div className="brand">
          {t('app.name')}
          <small>{t('app.subtitle')}</small>
        </div>
        <Menu theme="dark" mode="inline" selectedKeys={selected} items={items} onClick={(e) => navigate(e.key)} data-testid="nav" />
      </Layout.Sider>
      <Layout>
        <Layout.Header style={{ background: '#fff', padding: '0 24px', display: 'flex', justifyContent: 'flex-end', alignItems: 'center' }}>
          <Space size="middle">
            <span data-testid="whoami">
              <Typography.Text>{me.name || `#${me.key_id}`}</Typography.Text>{' '}
              <Tag color={me.role === 'admin' ? 'red' : me.role === 'analyst' ? 'blue' : 'gold'}>{t(`role.${me.role}` as Key)}</Tag>
              {me.owner && <Tag>{me.owner}</Tag>}
            </span>
            <Button icon={<TranslationOutlined />} onClick={toggle} data-testid="lang-toggle">
              {t('header.switchLang')}
            </Button>
            <Button icon={<LogoutOutlined />} onClick={() => { signOut(); navigate('/signin'); }} data-testid="sign-out">
              {t('header.signOut')}
            </Button>
          </Space>
        </Layout.Header>
        <Layout.Content style={{ margin: 24 }}>
          <Outlet />
        </Layout.Content>
      </Layout>
    </Layout>
  );
}
